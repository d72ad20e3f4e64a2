# hasseflow-case: n=30 category=numeric
import torch


def mask_mod(b, h, q_idx, kv_idx):
    d = q_idx - kv_idx
    near = d.abs() <= 2
    mid = (torch.abs(d) >= 6) & (torch.abs(d) <= 7)
    far = abs(d) == 12
    return near | mid | far
