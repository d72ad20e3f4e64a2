# hasseflow-case: n=12 category=vector
import torch
shift = torch.tensor([0, 3, 6], dtype=torch.int32)
def mask_mod(b, h, q_idx, kv_idx):
    near = (q_idx - kv_idx - shift) == 0
    return near.any() | (q_idx == kv_idx)
