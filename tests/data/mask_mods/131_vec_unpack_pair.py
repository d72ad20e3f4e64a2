# hasseflow-case: n=18 category=vector
import torch
bounds = torch.tensor([[0, 6], [6, 10], [10, 18]])
doc = torch.tensor([0] * 6 + [1] * 4 + [2] * 8)
def mask_mod(b, h, q_idx, kv_idx):
    lo, hi = bounds[doc[q_idx]]
    return (kv_idx >= lo) & (kv_idx < hi) & (kv_idx <= q_idx)
