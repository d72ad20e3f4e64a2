# hasseflow-case: n=18 category=tail
import torch
starts = torch.tensor([0, 4, 9, 15])
flags = torch.zeros(18, dtype=torch.long).scatter(0, starts, torch.ones(4, dtype=torch.long))
doc = flags.cumsum(0) - 1
def mask_mod(b, h, q_idx, kv_idx):
    return (doc[q_idx] == doc[kv_idx]) & (kv_idx <= q_idx)
