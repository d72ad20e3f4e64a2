# hasseflow-case: n=12 category=tail
import torch
import torch.nn.functional as F
ids = torch.tensor([9, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 9])
trimmed = F.pad(ids, (-1, -1))
def mask_mod(b, h, q_idx, kv_idx):
    return (trimmed[q_idx] == trimmed[kv_idx]) & (kv_idx <= q_idx)
