# hasseflow-case: n=16 category=tail
import torch
sep = torch.tensor([0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0])
(positions,) = torch.where(sep == 1)
bounds = torch.cat([torch.tensor([0]), positions + 1])
doc = torch.bucketize(torch.arange(16), positions, right=False)
def mask_mod(b, h, q_idx, kv_idx):
    return (doc[q_idx] == doc[kv_idx]) & (kv_idx >= bounds[doc[q_idx]]) & (kv_idx <= q_idx)
