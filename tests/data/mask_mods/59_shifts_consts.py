# hasseflow-case: n=64 category=numeric
import torch

LOG_BLOCK = 3
BLOCK = 1 << LOG_BLOCK
LOW_BITS = BLOCK - 1
MAX_LEN = 1 << 16


def mask_mod(b, h, q_idx, kv_idx):
    q_block = q_idx >> LOG_BLOCK
    kv_block = kv_idx >> LOG_BLOCK
    same_lane = (q_idx & LOW_BITS) == (kv_idx & LOW_BITS)
    return (q_block == kv_block) | (same_lane & (kv_block < q_block)) | ((kv_idx ^ q_idx) == 1)
