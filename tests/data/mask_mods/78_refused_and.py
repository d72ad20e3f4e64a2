# hasseflow-case: n=16 category=refused
import torch

WINDOW = 4


def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) and (q_idx - kv_idx < WINDOW)
