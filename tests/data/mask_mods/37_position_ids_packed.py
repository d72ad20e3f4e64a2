# hasseflow-case: n=36 category=lookup
import torch

# three samples packed into one row, positions restart at 0 for each (as collators emit them)
sample_lengths = [14, 9, 13]
position_ids = torch.cat([torch.arange(length) for length in sample_lengths])
sequence_index = (position_ids == 0).cumsum(dim=0) - 1


def packed_causal(b, h, q_idx, kv_idx):
    same = sequence_index[q_idx] == sequence_index[kv_idx]
    return same & (position_ids[kv_idx] <= position_ids[q_idx])


mask_mod = packed_causal
