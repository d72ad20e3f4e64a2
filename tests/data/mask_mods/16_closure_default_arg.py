# hasseflow-case: n=33 category=closure
import torch


def make_masks(sizes):
    out = []
    for size in sizes:
        # bind the loop variable through a default, the usual late-binding fix
        def m(b, h, q_idx, kv_idx, size=size):
            return (q_idx // size) >= (kv_idx // size)

        out.append(m)
    return out


block_causal_2, block_causal_5, block_causal_11 = make_masks([2, 5, 11])
mask_mod = block_causal_5
