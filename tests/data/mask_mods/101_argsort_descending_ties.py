# hasseflow-case: n=12 category=tail
import torch
score = torch.tensor([4, 1, 4, 3, 1, 1, 2, 4, 0, 3, 2, 2])
order = score.argsort(descending=True)
position = torch.empty_like(order) if False else torch.zeros_like(order)
position[order] = torch.arange(12)
def mask_mod(b, h, q_idx, kv_idx):
    return position[kv_idx] <= position[q_idx]
