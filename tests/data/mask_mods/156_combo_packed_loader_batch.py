# hasseflow-case: n=24 b=1 h=0 category=tail
"""A fixed example batch of packed documents: lengths per row padded to one table, then starts."""
import torch
import torch.nn.functional as F
rows = [torch.tensor([5, 9, 10]), torch.tensor([12, 12])]
padded = torch.stack([F.pad(r, (0, 3 - r.numel())) for r in rows])
offsets = F.pad(padded.cumsum(dim=1), (1, 0))
doc = torch.stack([torch.repeat_interleave(torch.arange(3), padded[0]), torch.repeat_interleave(torch.arange(3), padded[1])])
def mask_mod(b, h, q_idx, kv_idx):
    start = offsets[b][doc[b, q_idx]]
    return (kv_idx >= start) & (kv_idx <= q_idx)
