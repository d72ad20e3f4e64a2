# hasseflow-case: n=20 b=1 h=0 category=vector
import torch
modalities = torch.tensor([[[2, 4], [10, 5]], [[0, 3], [12, 6]]])
def mask_mod(b, h, q_idx, kv_idx):
    pairs = modalities[b]
    starts = pairs[:, 0]
    ends = pairs[:, 0] + pairs[:, 1]
    inside_q = (q_idx >= starts) & (q_idx < ends)
    inside_k = (kv_idx >= starts) & (kv_idx < ends)
    return (kv_idx <= q_idx) | (inside_q & inside_k).any()
