# hasseflow-case: n=45 category=closure
import torch


def build(kind):
    def with_size(size):
        if kind == "block":
            def mask(b, h, q_idx, kv_idx):
                return (q_idx // size) == (kv_idx // size)
        elif kind == "window":
            def mask(b, h, q_idx, kv_idx):
                return (q_idx - kv_idx).abs() < size
        else:
            raise ValueError(kind)
        return mask

    return with_size


block_of = build("block")
window_of = build("window")
mask_mod = window_of(7)
