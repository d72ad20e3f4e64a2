# hasseflow-case: n=11 category=tail
import torch
pos = torch.tensor([0, 1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 66, 78])
accel = torch.diff(pos, n=2)
def mask_mod(b, h, q_idx, kv_idx):
    return (accel[q_idx] - accel[kv_idx] >= 0) & (accel[q_idx] - accel[kv_idx] < 4)
