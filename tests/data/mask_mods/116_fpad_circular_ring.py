# hasseflow-case: n=12 category=tail
import torch
import torch.nn.functional as F
ring = torch.arange(10).view(1, 10)
wrapped = F.pad(ring, (1, 1), mode="circular").view(-1)
def mask_mod(b, h, q_idx, kv_idx):
    return (wrapped[q_idx] - wrapped[kv_idx]) % 10 <= 2
