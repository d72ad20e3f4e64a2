# hasseflow-case: n=12 b=0 h=1 category=tail
import torch
groups = torch.eye(3, dtype=torch.bool).unsqueeze(0).expand(2, 3, 3)
def mask_mod(b, h, q_idx, kv_idx):
    return groups[h, q_idx // 4, kv_idx // 4] | (q_idx == kv_idx)
