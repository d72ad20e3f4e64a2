# hasseflow-case: n=18 category=vector
import torch
doc_lengths = torch.tensor([6, 2, 7, 3])
order = torch.argsort(doc_lengths, descending=True)
lens = doc_lengths[order]
edges = torch.stack([lens.cumsum(0) - lens, lens.cumsum(0)], dim=1)
owner = torch.repeat_interleave(torch.arange(4), lens)
def mask_mod(b, h, q_idx, kv_idx):
    lo, hi = edges[owner[q_idx]]
    return (kv_idx >= lo) & (kv_idx < hi)
