# hasseflow-case: n=24 category=blockmask
import torch
from torch.nn.attention.flex_attention import create_block_mask
def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
base = create_block_mask(causal, 1, None, 24, 24, device="cpu", BLOCK_SIZE=8)
inner = base.mask_mod
def chunked(b, h, q_idx, kv_idx):
    return (q_idx // 6 == kv_idx // 6) & inner(b, h, q_idx % 6, kv_idx % 6)
mask_mod = create_block_mask(chunked, 1, None, 24, 24, device="cpu", BLOCK_SIZE=8).mask_mod
