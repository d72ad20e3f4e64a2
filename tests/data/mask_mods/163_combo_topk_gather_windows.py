# hasseflow-case: n=12 b=1 h=0 category=tail
import torch
quality = torch.tensor([[0.1, 0.9, 0.4, 0.7], [0.8, 0.2, 0.6, 0.3]])
_, best = quality.topk(2, dim=1)
windows = torch.tensor([[2, 3, 4, 5], [1, 6, 2, 8]])
picked = torch.gather(windows, 1, best)
def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx < picked[b, 0] + picked[b, 1] - 6)
