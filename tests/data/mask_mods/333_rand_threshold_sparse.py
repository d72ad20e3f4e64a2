# hasseflow-case: n=64 category=lookup
"""A random sparse pattern for an ablation: each key kept with probability 0.3 per query, with
the diagonal always kept so that no row is empty."""
import torch

torch.manual_seed(42)
N = 64
KEEP_PROB = 0.3
keep = torch.rand(N, N) < KEEP_PROB


def mask_mod(b, h, q_idx, kv_idx):
    return keep[q_idx, kv_idx] | (q_idx == kv_idx)
