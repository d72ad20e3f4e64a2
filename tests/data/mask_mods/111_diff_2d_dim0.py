# hasseflow-case: n=16 b=1 h=0 category=tail
import torch
cum = torch.tensor([[0, 4, 9, 16], [0, 8, 12, 16]]).t()
lengths = torch.diff(cum, dim=0).t()
doc = torch.stack([torch.repeat_interleave(torch.arange(3), lengths[0]), torch.repeat_interleave(torch.arange(3), lengths[1])])
def mask_mod(b, h, q_idx, kv_idx):
    return (doc[b, q_idx] == doc[b, kv_idx]) & (kv_idx <= q_idx)
