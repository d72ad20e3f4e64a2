# hasseflow-case: n=16 category=tail
import torch
ids = torch.tensor([0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 4, 4, 4, 4])
starts = torch.diff(ids, prepend=torch.tensor([-1])) != 0
changes = torch.diff(starts, append=torch.tensor([True]))
def mask_mod(b, h, q_idx, kv_idx):
    return ((ids[q_idx] == ids[kv_idx]) & (kv_idx <= q_idx)) | (starts[kv_idx] & changes[q_idx])
