# hasseflow-case: n=48 category=lookup
"""Permutation language modelling: a random factorisation order, and each position attends to the
positions that come no later than itself in that order."""
import torch

N = 48
g = torch.Generator().manual_seed(7)
order = torch.randperm(N, generator=g)
rank = torch.zeros(N, dtype=torch.long)
rank[order] = torch.arange(N)


def mask_mod(b, h, q_idx, kv_idx):
    return rank[kv_idx] <= rank[q_idx]
