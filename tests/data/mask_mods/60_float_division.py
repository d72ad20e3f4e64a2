# hasseflow-case: n=50 category=numeric
import torch

FRAME = 4.0


def mask_mod(b, h, q_idx, kv_idx):
    same_frame = torch.floor(q_idx / FRAME) == torch.floor(kv_idx / FRAME)
    # keys at least half-way to the query, measured relatively
    ratio = (kv_idx + 1) / (q_idx + 1)
    return same_frame | ((ratio >= 0.5) & (ratio <= 1.0))
