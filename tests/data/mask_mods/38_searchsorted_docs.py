# hasseflow-case: n=40 category=lookup
import torch

boundaries = torch.tensor([0, 6, 17, 23, 40])
doc_index = torch.searchsorted(boundaries, torch.arange(40), right=True) - 1


def mask_mod(b, h, q_idx, kv_idx):
    return doc_index[q_idx] == doc_index[kv_idx]
