# hasseflow-case: n=20 category=tail
import torch
ids = torch.tensor([0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5])
is_last = ids != ids.roll(-1)
is_last[-1] = True
def mask_mod(b, h, q_idx, kv_idx):
    same = ids[q_idx] == ids[kv_idx]
    return (same & (kv_idx <= q_idx)) | is_last[kv_idx] & (kv_idx < q_idx)
