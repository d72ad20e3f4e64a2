# hasseflow-case: n=15 category=tail
import torch
doc = torch.tensor([0, 0, 0, 0, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3])
sizes = torch.bincount(doc, minlength=5)
long_doc = sizes >= 4
def mask_mod(b, h, q_idx, kv_idx):
    same = doc[q_idx] == doc[kv_idx]
    return same & (long_doc[doc[q_idx]] | (kv_idx <= q_idx))
