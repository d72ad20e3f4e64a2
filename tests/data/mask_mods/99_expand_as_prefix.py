# hasseflow-case: n=16 b=1 h=0 category=tail
import torch
prefix = torch.tensor([[3], [6]])
grid = torch.zeros(2, 16, dtype=torch.long)
limits = prefix.expand_as(grid)
def mask_mod(b, h, q_idx, kv_idx):
    return (kv_idx < limits[b, q_idx]) | (kv_idx <= q_idx)
