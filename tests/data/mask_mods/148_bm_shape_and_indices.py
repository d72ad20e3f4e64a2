# hasseflow-case: n=24 category=blockmask
import torch
from torch.nn.attention.flex_attention import create_block_mask
def band(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx).abs() < 9
bm = create_block_mask(band, 2, 1, 48, 48, device="cpu", BLOCK_SIZE=8)
B, H, Q, KV = bm.shape
first_row = bm.kv_indices[0, 0, 2]
W = int(first_row[0]) + Q // 16
def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx).abs() < W
