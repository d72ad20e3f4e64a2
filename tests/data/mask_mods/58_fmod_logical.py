# hasseflow-case: n=27 category=numeric
import torch


def mask_mod(b, h, q_idx, kv_idx):
    d = q_idx - kv_idx
    # fmod keeps the sign of the dividend, unlike %
    stripe = torch.fmod(d, 5) == -1
    ring = (d % 5) == 1
    causal = torch.logical_or(d == 0, d > 0)
    return torch.logical_or(torch.logical_and(causal, ring), stripe)
