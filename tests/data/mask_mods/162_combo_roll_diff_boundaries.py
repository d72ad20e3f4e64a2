# hasseflow-case: n=16 category=tail
import torch
doc = torch.tensor([0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 3, 3, 3, 4, 4])
nxt = doc.roll(-1)
ends = (torch.diff(doc, append=torch.tensor([99])) != 0).nonzero().flatten()
last_of_doc = ends[doc]
def mask_mod(b, h, q_idx, kv_idx):
    return (doc[q_idx] == doc[kv_idx]) & ((kv_idx <= q_idx) | (kv_idx == last_of_doc[q_idx])) | (nxt[q_idx] == doc[kv_idx]) & (kv_idx == q_idx + 1)
