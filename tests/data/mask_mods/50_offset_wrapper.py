# hasseflow-case: n=20 category=wrapper
import torch


def add_offsets(mask_fn, q_offset, kv_offset):
    """Decoding with a cache: the queries start `q_offset` tokens into the sequence."""

    def shifted(b, h, q_idx, kv_idx):
        return mask_fn(b, h, q_idx + q_offset, kv_idx + kv_offset)

    return shifted


def causal_window(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & (kv_idx > q_idx - 6)


mask_mod = add_offsets(causal_window, q_offset=4, kv_offset=0)
