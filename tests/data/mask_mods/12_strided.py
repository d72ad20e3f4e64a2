# hasseflow-case: n=72 category=factory
"""Sparse Transformer (Child et al.) strided pattern, the two heads merged into one mask."""
import torch


def strided_pattern(stride):
    def strided(b, h, q_idx, kv_idx):
        causal = kv_idx <= q_idx
        local = (q_idx - kv_idx) < stride
        column = ((q_idx - kv_idx) % stride) == 0
        return causal & (local | column)

    return strided


STRIDE = 8
mask_mod = strided_pattern(STRIDE)
