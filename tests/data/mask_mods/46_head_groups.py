# hasseflow-case: n=64 b=0 h=6 category=batchhead
import torch

N_HEADS = 8
HEADS_PER_GROUP = 2
group_windows = torch.tensor([4, 8, 16, 64])
group_sinks = torch.tensor([0, 1, 2, 4])


def mask_mod(b, h, q_idx, kv_idx):
    g = h // HEADS_PER_GROUP
    window = group_windows[g]
    recent = (q_idx - kv_idx) < window
    sink = kv_idx < group_sinks[g]
    return (recent | sink) & (kv_idx <= q_idx)
