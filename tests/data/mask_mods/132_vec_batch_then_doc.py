# hasseflow-case: n=16 b=1 h=0 category=vector
import torch
intervals = torch.tensor([[[0, 4], [4, 16]], [[0, 10], [10, 16]]])
doc = torch.tensor([[0] * 4 + [1] * 12, [0] * 10 + [1] * 6])
def mask_mod(b, h, q_idx, kv_idx):
    row = intervals[b][doc[b, q_idx]]
    return (kv_idx >= row[0]) & (kv_idx < row[1])
