# hasseflow-case: n=20 category=blockmask
import torch
from torch.nn.attention.flex_attention import create_block_mask
def prefix_lm(b, h, q_idx, kv_idx):
    return (kv_idx < 6) | (kv_idx <= q_idx)
block_mask = create_block_mask(prefix_lm, 1, 1, 32, 32, device="cpu", BLOCK_SIZE=8).to("cuda")
mask_mod = block_mask.mask_mod
