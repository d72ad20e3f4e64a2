# hasseflow-case: n=50 category=closure
import torch


def sliding(window):
    def fn(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx < window)

    return fn


# one mask per window size, as a model with several layer types would keep them
masks = {}
for w in (2, 4, 8, 16):
    masks[w] = sliding(w)

mask_mod = masks[8]
