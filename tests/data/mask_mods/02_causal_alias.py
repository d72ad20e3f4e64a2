# hasseflow-case: n=16 category=factory
import torch


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


# the training loop below imports `mask_mod` by name
mask_mod = causal
