# hasseflow-case: n=24 entry=block_mask category=blockmask
import torch
from torch.nn.attention.flex_attention import BlockMask
def causal(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx
kv_num_blocks = torch.tensor([[[1, 1, 2]]], dtype=torch.int32)
kv_indices = torch.tensor([[[[0, 0, 0], [1, 0, 0], [0, 2, 1]]]], dtype=torch.int32)
block_mask = BlockMask.from_kv_blocks(kv_num_blocks, kv_indices, BLOCK_SIZE=8, mask_mod=causal)
