# hasseflow-case: n=24 category=blockmask
import torch
from torch.nn.attention.flex_attention import _DEFAULT_SPARSE_BLOCK_SIZE, create_block_mask
TILE = _DEFAULT_SPARSE_BLOCK_SIZE // 16
def tiles(b, h, q_idx, kv_idx):
    return (q_idx // TILE) >= (kv_idx // TILE)
bm = create_block_mask(tiles, 1, 1, 128, 128, device="cpu")
mask_mod = bm.mask_mod
