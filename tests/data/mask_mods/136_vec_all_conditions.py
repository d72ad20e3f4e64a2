# hasseflow-case: n=16 category=vector
import torch
moduli = torch.tensor([2, 3])
def mask_mod(b, h, q_idx, kv_idx):
    return ((q_idx - kv_idx) % moduli == 0).all() | (q_idx == kv_idx)
