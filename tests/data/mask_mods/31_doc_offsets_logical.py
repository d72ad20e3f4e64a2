# hasseflow-case: n=30 category=lookup
import torch

doc_lengths = [8, 5, 12, 5]
offsets = torch.cumsum(torch.tensor([0] + doc_lengths), dim=0)
document_id = torch.repeat_interleave(torch.arange(len(doc_lengths)), torch.tensor(doc_lengths))
WINDOW = 3


def inner(b, h, q, kv):
    # sliding window on positions inside one document
    return (q >= kv) & (q - kv <= WINDOW)


def mask_mod(b, h, q_idx, kv_idx):
    same_doc = document_id[q_idx] == document_id[kv_idx]
    q_logical = q_idx - offsets[document_id[q_idx]]
    kv_logical = kv_idx - offsets[document_id[kv_idx]]
    return same_doc & inner(b, h, q_logical, kv_logical)
