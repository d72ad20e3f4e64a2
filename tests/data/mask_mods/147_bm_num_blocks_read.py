# hasseflow-case: n=32 category=blockmask
import torch
from torch.nn.attention.flex_attention import create_block_mask
def causal(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx
bm = create_block_mask(causal, 1, 1, 64, 64, device="cpu", BLOCK_SIZE=16)
partial_count = int(bm.kv_num_blocks.sum())
full_count = int(bm.full_kv_num_blocks.sum())
SINK = partial_count + full_count - 8
def mask_mod(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & ((q_idx - kv_idx < 4) | (kv_idx < SINK))
