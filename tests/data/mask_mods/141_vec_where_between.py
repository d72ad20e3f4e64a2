# hasseflow-case: n=14 category=vector
import torch
limits = torch.tensor([[0, 3], [3, 9], [9, 14]])
group = torch.tensor([0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2])
def mask_mod(b, h, q_idx, kv_idx):
    span = limits[group[kv_idx]]
    width = torch.where(span[1] - span[0] > 4, span[1] - span[0], 0)
    return (q_idx - kv_idx < width) & (kv_idx <= q_idx) | (q_idx == kv_idx)
