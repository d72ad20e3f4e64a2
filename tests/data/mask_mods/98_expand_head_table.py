# hasseflow-case: n=12 b=0 h=2 category=tail
import torch
windows = torch.tensor([2, 4, 8])
per_bh = windows.view(1, 3).expand(2, -1)
def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx >= 0) & (q_idx - kv_idx < per_bh[b, h])
