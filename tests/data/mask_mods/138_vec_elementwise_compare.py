# hasseflow-case: n=15 category=vector
import torch
coords = torch.tensor([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2], [2, 0], [2, 1], [2, 2],
                       [3, 0], [3, 1], [3, 2], [4, 0], [4, 1], [4, 2]])
def mask_mod(b, h, q_idx, kv_idx):
    close = (coords[q_idx] - coords[kv_idx]).abs() <= 1
    return close.all()
