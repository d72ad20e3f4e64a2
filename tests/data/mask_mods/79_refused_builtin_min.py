# hasseflow-case: n=16 category=refused
import torch

CHUNK = 4


def mask_mod(b, h, q_idx, kv_idx):
    start = min(q_idx, kv_idx)
    return (start // CHUNK) == (kv_idx // CHUNK)
