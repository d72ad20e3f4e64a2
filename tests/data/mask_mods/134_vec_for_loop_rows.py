# hasseflow-case: n=20 b=1 h=0 category=vector
import torch
mods = torch.tensor([[[1, 4], [9, 6]], [[3, 3], [0, 0]]]).long()
def mask_mod(b, h, q_idx, kv_idx):
    allowed = kv_idx <= q_idx
    for offset, length in mods[b]:
        allowed = allowed | ((q_idx >= offset) & (kv_idx < offset + length))
    return allowed
