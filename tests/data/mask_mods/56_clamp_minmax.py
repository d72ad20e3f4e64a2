# hasseflow-case: n=40 category=numeric
import torch

PREFIX = 6
WINDOW = 5


def mask_mod(b, h, q_idx, kv_idx):
    # window start, never before the end of the prefix
    start = (q_idx - WINDOW).clamp(min=PREFIX)
    end = torch.clamp(q_idx, max=35)
    in_window = (kv_idx >= start) & (kv_idx <= end)
    lo = torch.minimum(q_idx, kv_idx)
    hi = torch.maximum(q_idx, kv_idx)
    both_in_prefix = hi < PREFIX
    touches_prefix = (lo < PREFIX) & (kv_idx <= q_idx)
    return in_window | both_in_prefix | touches_prefix
