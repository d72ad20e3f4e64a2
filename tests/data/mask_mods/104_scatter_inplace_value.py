# hasseflow-case: n=16 category=tail
import torch
marks = torch.zeros(16, dtype=torch.bool)
marks.scatter_(0, torch.tensor([0, 5, 15]), True)
def mask_mod(b, h, q_idx, kv_idx):
    return marks[kv_idx] | (q_idx == kv_idx)
