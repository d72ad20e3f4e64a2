# hasseflow-case: n=64 category=lookup
import torch

N = 64
RADIUS = 2
is_global = torch.zeros(N, dtype=torch.bool)
is_global[::16] = True
is_global[-1] = True


def mask_mod(b, h, q_idx, kv_idx):
    local = (q_idx - kv_idx).abs() <= RADIUS
    return local | is_global[q_idx] | is_global[kv_idx]
