# hasseflow-case: n=24 category=blockmask
import torch
from torch.nn.attention.flex_attention import create_block_mask
def strided(b, h, q_idx, kv_idx):
    return (kv_idx % 4 == 0) | (kv_idx == q_idx)
bm = create_block_mask(strided, None, None, 32, 32, device="cpu", BLOCK_SIZE=(8, 16))
q_block, kv_block = bm.BLOCK_SIZE
mask_mod = bm.mask_mod
assert q_block == 8 and kv_block == 16
