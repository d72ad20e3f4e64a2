# hasseflow-case: n=32 category=refused
"""A packing bug: the document table was built for 28 tokens, the mask is asked for 32, so the
lookups run past its end (torch raises an IndexError from create_mask)."""
import torch

doc_lengths = [10, 6, 12]
document_id = torch.repeat_interleave(torch.arange(len(doc_lengths)), torch.tensor(doc_lengths))


def mask_mod(b, h, q_idx, kv_idx):
    return (document_id[q_idx] == document_id[kv_idx]) & (kv_idx <= q_idx)
