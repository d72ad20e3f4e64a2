# hasseflow-case: n=16 category=vector
import torch
anchors = torch.zeros(4, dtype=torch.long).scatter(0, torch.tensor([1, 3]), torch.tensor([5, 11]))
def mask_mod(b, h, q_idx, kv_idx):
    return (kv_idx == anchors).any() & (kv_idx <= q_idx) | (q_idx == kv_idx)
