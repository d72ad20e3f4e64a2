# hasseflow-case: n=24 category=tail
"""A per-position table read back to front (flip on one and on two dimensions)."""
import torch

ranks = torch.arange(24).flip(0)
grid = torch.arange(24).view(4, 6)
mirrored = torch.flip(grid, dims=[0, 1]).reshape(-1)


def mask_mod(b, h, q_idx, kv_idx):
    near = (ranks[kv_idx] - ranks[q_idx]).abs() <= 3
    return near & (mirrored[kv_idx] <= mirrored[q_idx] + 6)
