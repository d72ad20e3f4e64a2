# hasseflow-case: n=100 b=0 h=5 category=batchhead
import torch

NUM_HEADS = 8
# a different look-back per head, doubling from head to head
windows = torch.tensor([2 ** (i + 1) for i in range(NUM_HEADS)])


def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx < windows[h])
