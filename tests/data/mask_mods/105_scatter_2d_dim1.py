# hasseflow-case: n=12 b=1 h=0 category=tail
import torch
table = torch.zeros(2, 12, dtype=torch.int64)
table.scatter_(1, torch.tensor([[1, 6], [3, 9]]), torch.tensor([[1, 1], [1, 1]]))
segment = table.cumsum(dim=1)
def mask_mod(b, h, q_idx, kv_idx):
    return segment[b, q_idx] == segment[b, kv_idx]
