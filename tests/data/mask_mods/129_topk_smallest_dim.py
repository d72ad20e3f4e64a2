# hasseflow-case: n=12 b=1 h=0 category=tail
import torch
cost = torch.tensor([[5, 3, 8, 1, 9, 2], [4, 7, 6, 0, 11, 10]])
_, cheap = cost.topk(2, dim=1, largest=False)
def mask_mod(b, h, q_idx, kv_idx):
    return ((kv_idx % 6) == cheap[b, 0]) | ((kv_idx % 6) == cheap[b, 1]) | (q_idx == kv_idx)
