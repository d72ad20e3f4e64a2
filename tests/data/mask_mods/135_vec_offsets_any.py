# hasseflow-case: n=16 category=vector
import torch
dilations = torch.tensor([1, 2, 4, 8])
def mask_mod(b, h, q_idx, kv_idx):
    return ((q_idx - kv_idx) == dilations).any() | (q_idx == kv_idx)
