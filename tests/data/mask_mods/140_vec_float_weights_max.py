# hasseflow-case: n=12 category=vector
import torch
scales = torch.tensor([0.5, 1.0, 1.5])
def mask_mod(b, h, q_idx, kv_idx):
    reach = (scales * q_idx).amax()
    return (kv_idx <= reach) & (kv_idx <= q_idx) | ((scales * kv_idx).amin() > 5.0)
