# hasseflow-case: n=24 category=tail
"""Document starts from lengths by cumsum and roll, the way packed loaders do it."""
import torch
lengths = torch.tensor([5, 7, 4, 8])
starts = lengths.cumsum(0).roll(1)
starts[0] = 0
owner = torch.repeat_interleave(torch.arange(4), lengths)
def mask_mod(b, h, q_idx, kv_idx):
    return (kv_idx >= starts[owner[q_idx]]) & (kv_idx <= q_idx)
