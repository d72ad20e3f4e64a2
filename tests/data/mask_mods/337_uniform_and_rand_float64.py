# hasseflow-case: n=50 category=lookup
"""Stochastic depth of attention: a per-key drop score in float64 from a seeded generator,
against a threshold picked with random.uniform (both fixed at import for a reproducible test)."""
import random

import torch

random.seed(11)
THRESHOLD = random.uniform(0.2, 0.6)
N = 50
score = torch.rand((N,), generator=torch.Generator().manual_seed(3), dtype=torch.float64)
keep_key = score > THRESHOLD


def mask_mod(b, h, q_idx, kv_idx):
    return (keep_key[kv_idx] & (kv_idx <= q_idx)) | (kv_idx == q_idx)
