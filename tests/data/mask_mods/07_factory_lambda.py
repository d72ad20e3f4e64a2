# hasseflow-case: n=32 category=closure
import torch


def make_band(lo, hi):
    return lambda b, h, q_idx, kv_idx: (q_idx - kv_idx >= lo) & (q_idx - kv_idx <= hi)


mask_mod = make_band(0, 5)
