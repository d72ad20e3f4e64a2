# hasseflow-case: n=36 category=factory
import torch


def make_causal():
    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    return causal


def windowed(inner, width):
    def limited(b, h, q_idx, kv_idx):
        return inner(b, h, q_idx, kv_idx) & (q_idx - kv_idx < width)

    return limited


base = make_causal()
local = windowed(base, 4)
mask_mod = local
