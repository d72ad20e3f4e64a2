# hasseflow-case: n=16 category=vector
import torch
edges = torch.tensor([4, 8, 12])
def mask_mod(b, h, q_idx, kv_idx):
    q_seg = (q_idx >= edges).sum()
    k_seg = (kv_idx >= edges).sum()
    return (q_seg == k_seg) & (kv_idx <= q_idx)
