# hasseflow-case: n=18 category=vector
import torch
segments = torch.tensor([[0, 0, 6], [0, 6, 12], [1, 12, 18]])
seg_of = torch.tensor([0] * 6 + [1] * 6 + [2] * 6)
def mask_mod(b, h, q_idx, kv_idx):
    qs = segments[seg_of[q_idx]]
    ks = segments[seg_of[kv_idx]]
    same_doc = qs[0] == ks[0]
    return same_doc & (kv_idx <= q_idx) | ((qs == ks).all() & (qs[2] - qs[1] == 6))
