# hasseflow-case: n=10 category=tail
import torch
priority = torch.tensor([7, 2, 9, 2, 5, 1, 8, 3, 3, 6])
rank = torch.argsort(torch.argsort(priority))
def mask_mod(b, h, q_idx, kv_idx):
    return rank[kv_idx] <= rank[q_idx]
