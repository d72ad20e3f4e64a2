# hasseflow-case: n=14 category=tail
import torch
labels = torch.tensor([30, 10, 30, 20, 10, 40, 20, 20, 30, 10, 40, 40, 10, 20])
kinds, group = torch.unique(labels, return_inverse=True)
def mask_mod(b, h, q_idx, kv_idx):
    return (group[q_idx] == group[kv_idx]) | (kinds[group[kv_idx]] < 20)
