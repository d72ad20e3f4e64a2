# hasseflow-case: n=16 b=0 h=2 category=vector
import torch
head_band = torch.tensor([[0, 2], [1, 4], [2, 8]])
def mask_mod(b, h, q_idx, kv_idx):
    lo, hi = head_band[h]
    gap = q_idx - kv_idx
    return (gap >= lo) & (gap <= hi)
