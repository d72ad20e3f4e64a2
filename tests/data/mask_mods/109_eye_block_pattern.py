# hasseflow-case: n=16 category=tail
import torch
pattern = torch.eye(4, dtype=torch.bool) | torch.eye(4, dtype=torch.bool).roll(1, dims=1)
def mask_mod(b, h, q_idx, kv_idx):
    return pattern[q_idx // 4, kv_idx // 4]
