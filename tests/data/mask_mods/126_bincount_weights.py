# hasseflow-case: n=12 category=tail
import torch
bucket = torch.tensor([0, 1, 1, 2, 2, 2])
weight = torch.tensor([0.5, 1.0, 1.5, 2.0, 0.25, 0.25])
mass = torch.bincount(bucket, weights=weight)
def mask_mod(b, h, q_idx, kv_idx):
    return mass[kv_idx % 3] <= mass[q_idx % 3]
