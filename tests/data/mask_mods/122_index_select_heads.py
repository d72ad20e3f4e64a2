# hasseflow-case: n=16 b=0 h=3 category=tail
import torch
all_windows = torch.tensor([1, 2, 3, 5, 8, 13])
chosen = all_windows.index_select(0, torch.tensor([5, 0, 4, 2]))
def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx <= chosen[h])
