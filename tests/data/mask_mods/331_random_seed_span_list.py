# hasseflow-case: n=80 category=lookup
"""Spans of a synthetic packed sample built with the standard library's `random`, seeded at the
top of the script as a reproducible data sampler does."""
import random

import torch

random.seed(20240611)
N = 80

boundaries = [0]
while boundaries[-1] < N:
    boundaries.append(min(N, boundaries[-1] + random.randint(4, 17)))
spans = list(zip(boundaries[:-1], boundaries[1:]))

doc_of_token = torch.zeros(N, dtype=torch.long)
for doc, (start, end) in enumerate(spans):
    doc_of_token[start:end] = doc


def mask_mod(b, h, q_idx, kv_idx):
    return (doc_of_token[q_idx] == doc_of_token[kv_idx]) & (q_idx >= kv_idx)
