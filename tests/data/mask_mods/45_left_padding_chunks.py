# hasseflow-case: n=40 b=2 h=0 category=batchhead
import torch

CHUNK = 8
left_padding = torch.tensor([0, 3, 7])


def mask_mod(b, h, q_idx, kv_idx):
    q_pos = q_idx - left_padding[b]
    kv_pos = kv_idx - left_padding[b]
    same_chunk = (q_pos // CHUNK) == (kv_pos // CHUNK)
    return same_chunk & (kv_idx <= q_idx) & (kv_pos >= 0)
