# hasseflow-case: n=24 category=lookup
import torch

n = 24
allowed = torch.zeros(n, n, dtype=torch.bool)
allowed[:, :4] = True
allowed[10:20, 10:20] = True
allowed[5, 7] = True


def mask_mod(b, h, q_idx, kv_idx):
    return allowed[q_idx, kv_idx] | (q_idx == kv_idx)
