# hasseflow-case: n=16 category=refused
import torch


def mask_mod(b, h, q_idx, kv_idx):
    # data-dependent control flow: fine in a loop over ints, not for tensors under vmap
    if q_idx >= kv_idx:
        return True
    return False
