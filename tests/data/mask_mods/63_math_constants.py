# hasseflow-case: n=100 category=numeric
import math

import torch

N = 100
BLOCK = 16
NUM_BLOCKS = math.ceil(N / BLOCK)
LOCAL_BLOCKS = max(1, int(math.log2(NUM_BLOCKS)))
THETA = 10_000.0


def mask_mod(b, h, q_idx, kv_idx):
    qb = q_idx // BLOCK
    kb = kv_idx // BLOCK
    return (kb <= qb) & (qb - kb < LOCAL_BLOCKS) | (kb == NUM_BLOCKS - 1)
