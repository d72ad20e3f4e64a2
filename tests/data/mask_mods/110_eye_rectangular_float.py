# hasseflow-case: n=12 category=tail
import torch
band = torch.eye(3, 4) + torch.eye(3, 4).roll(-1, 1)
def mask_mod(b, h, q_idx, kv_idx):
    return band[q_idx % 3, kv_idx % 4] > 0.5
