# hasseflow-case: n=16 category=tail
"""A jagged example batch: the offsets of a nested tensor give each document's first token."""
import torch
sample = torch.nested.nested_tensor([torch.arange(5), torch.arange(7), torch.arange(4)], layout=torch.jagged)
offsets = sample.offsets()
doc = torch.repeat_interleave(torch.arange(sample.size(0)), torch.diff(offsets))
def mask_mod(b, h, q_idx, kv_idx):
    return (doc[q_idx] == doc[kv_idx]) & (kv_idx >= offsets[doc[q_idx]]) & (kv_idx <= q_idx)
