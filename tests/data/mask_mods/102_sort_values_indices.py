# hasseflow-case: n=12 category=tail
import torch
ages = torch.tensor([3.5, 1.0, 2.0, 9.0, 0.5, 7.0, 7.0, 4.0, 6.0, 2.5, 8.0, 5.0])
values, idx = torch.sort(ages, descending=False)
slot = torch.zeros(12, dtype=torch.long)
slot[idx] = torch.arange(12)
def mask_mod(b, h, q_idx, kv_idx):
    return (slot[kv_idx] <= slot[q_idx]) & (values[slot[q_idx]] - values[slot[kv_idx]] < 3.0)
