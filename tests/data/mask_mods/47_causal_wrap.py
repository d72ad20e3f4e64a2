# hasseflow-case: n=28 category=wrapper
import torch


def causal_wrap(inner):
    """Restricts any mask to keys at or before the query."""

    def wrapped(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & inner(b, h, q_idx, kv_idx)

    return wrapped


def every_third(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx) % 3 == 0


def local_band(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx).abs() < 4


mask_mod = causal_wrap(lambda b, h, q, kv: every_third(b, h, q, kv) | local_band(b, h, q, kv))
