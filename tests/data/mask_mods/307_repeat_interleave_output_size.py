# hasseflow-case: n=20 category=tail
"""Segment ids from lengths with repeat_interleave(..., output_size=total), the form that skips
a host sync, plus clamp_min / clamp_max as torch functions and a device check."""
import torch

lengths = torch.tensor([6, 3, 7, 4])
total = 20
ids = torch.repeat_interleave(torch.arange(lengths.shape[0], dtype=torch.int32), lengths, output_size=total)
assert ids.device == lengths.device
reach = torch.clamp_max(torch.clamp_min(lengths - 2, 2), 4)


def mask_mod(b, h, q_idx, kv_idx):
    same = ids[q_idx] == ids[kv_idx]
    return same & (q_idx - kv_idx >= 0) & (q_idx - kv_idx < reach[ids[q_idx]])
