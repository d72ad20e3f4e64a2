# hasseflow-case: n=20 category=tail
"""Offsets as a jagged layout would keep them: lengths -> offsets -> per-token sequence id."""
import torch
lengths = torch.tensor([4, 6, 3, 7])
offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)])
seq_id = torch.searchsorted(offsets, torch.arange(20), right=True) - 1
def mask_mod(b, h, q_idx, kv_idx):
    return (seq_id[q_idx] == seq_id[kv_idx]) & (kv_idx >= offsets[seq_id[q_idx]])
