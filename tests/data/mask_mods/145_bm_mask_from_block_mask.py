# hasseflow-case: n=32 category=blockmask
import torch
from torch.nn.attention.flex_attention import create_block_mask
def local(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx >= 0) & (q_idx - kv_idx < 6)
block_mask = create_block_mask(local, B=None, H=None, Q_LEN=64, KV_LEN=64, device="cuda")
mask_mod = block_mask.mask_mod
