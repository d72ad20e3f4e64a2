# hasseflow-case: n=16 entry=block_mask category=blockmask
import torch
from torch.nn.attention.flex_attention import BlockMask
kv_num = torch.tensor([[[1, 2, 1, 2]]], dtype=torch.int32)
kv_idx_table = torch.tensor([[[[0, 0, 0, 0], [0, 1, 0, 0], [2, 0, 0, 0], [1, 3, 0, 0]]]], dtype=torch.int32)
block_mask = BlockMask.from_kv_blocks(kv_num, kv_idx_table, BLOCK_SIZE=4)
