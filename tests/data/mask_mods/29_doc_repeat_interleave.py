# hasseflow-case: n=32 category=lookup
import torch

lengths = torch.tensor([5, 9, 3, 15])
doc = torch.repeat_interleave(torch.arange(len(lengths)), lengths)


def document_causal(b, h, q_idx, kv_idx):
    return (doc[q_idx] == doc[kv_idx]) & (q_idx >= kv_idx)


mask_mod = document_causal
