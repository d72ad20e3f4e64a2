# hasseflow-case: n=20 category=tail
import torch
tokens = torch.tensor([5, 5, 5, 2, 2, 9, 9, 9, 9, 5, 5, 1, 1, 1, 1, 1, 3, 3, 7, 7])
_, run_id, run_len = torch.unique_consecutive(tokens, return_inverse=True, return_counts=True)
def mask_mod(b, h, q_idx, kv_idx):
    return (run_id[q_idx] == run_id[kv_idx]) | (run_len[run_id[kv_idx]] >= 5)
