# hasseflow-case: n=64 category=factory
"""Longformer-like: a symmetric band plus a few global tokens at the front."""
import torch


def longformer_mask(radius: int, num_global: int):
    def longformer(b, h, q_idx, kv_idx):
        band = (q_idx - kv_idx).abs() <= radius
        global_key = kv_idx < num_global
        global_query = q_idx < num_global
        return band | global_key | global_query

    return longformer


mask_mod = longformer_mask(radius=3, num_global=2)
