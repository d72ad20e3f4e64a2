# hasseflow-case: n=16 category=tail
import torch
salience = torch.tensor([3, 9, 1, 4, 15, 2, 6, 11, 0, 5, 7, 13, 8, 12, 10, 14])
top_vals, top_idx = torch.topk(salience, 3)
is_landmark = torch.zeros(16, dtype=torch.bool)
is_landmark[top_idx] = True
def mask_mod(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & (is_landmark[kv_idx] | (q_idx - kv_idx < 3))
