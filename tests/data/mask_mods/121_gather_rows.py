# hasseflow-case: n=12 b=1 h=0 category=tail
import torch
starts = torch.tensor([[0, 3, 7, 10], [0, 5, 6, 11]])
doc_of = torch.tensor([[0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 3, 3], [0, 0, 0, 0, 0, 1, 2, 2, 2, 2, 2, 3]])
start_of_token = torch.gather(starts, 1, doc_of)
def mask_mod(b, h, q_idx, kv_idx):
    return (kv_idx >= start_of_token[b, q_idx]) & (kv_idx <= q_idx)
