# hasseflow-case: n=26 category=wrapper
import torch


def invert(fn):
    def inverted(b, h, q_idx, kv_idx):
        return ~fn(b, h, q_idx=q_idx, kv_idx=kv_idx)

    return inverted


def strictly_future(b, h, q_idx, kv_idx):
    return kv_idx > q_idx


def union(*fns):
    def u(b, h, q_idx, kv_idx):
        out = fns[0](b, h, q_idx, kv_idx)
        for fn in fns[1:]:
            out = out | fn(b, h, q_idx, kv_idx)
        return out

    return u


mask_mod = union(invert(strictly_future), lambda b, h, q_idx, kv_idx: kv_idx - q_idx == 3)
