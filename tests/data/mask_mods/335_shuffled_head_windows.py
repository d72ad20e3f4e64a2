# hasseflow-case: n=40 b=0 h=3 category=batchhead
"""Per-head sliding windows, shuffled once so that heads are not ordered by window size, plus a
random dilation picked with random.choice."""
import random

import torch

random.seed(5)
windows = [2, 3, 5, 8, 13, 21]
random.shuffle(windows)
DILATION = random.choice([1, 2, 3])
head_window = torch.tensor(windows)


def mask_mod(b, h, q_idx, kv_idx):
    dist = q_idx - kv_idx
    return (dist >= 0) & (dist <= head_window[h] * DILATION) & (dist % DILATION == 0)
