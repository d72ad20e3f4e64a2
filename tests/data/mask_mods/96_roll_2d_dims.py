# hasseflow-case: n=16 category=tail
import torch
grid = torch.arange(16).view(4, 4)
shifted = torch.roll(grid, shifts=(1, -1), dims=(0, 1)).flatten()
def mask_mod(b, h, q_idx, kv_idx):
    return (shifted[q_idx] % 5) <= (shifted[kv_idx] % 5)
