# hasseflow-case: n=16 category=tail
import torch
lengths = torch.tensor([4, 0, 6, 0, 0, 6])
kept = torch.masked_select(lengths, lengths > 0)
doc = torch.repeat_interleave(torch.arange(kept.numel()), kept)
def mask_mod(b, h, q_idx, kv_idx):
    return doc[q_idx] == doc[kv_idx]
