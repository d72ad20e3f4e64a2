# hasseflow-case: n=24 b=1 h=0 entry=blocks category=blockmask
import torch
from torch.nn.attention.flex_attention import BlockMask
def near(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx).abs() <= 3
num = torch.tensor([[[1, 1, 1]], [[2, 0, 1]]], dtype=torch.int32)
idx = torch.tensor([[[[0, 0, 0], [1, 0, 0], [2, 0, 0]]], [[[0, 1, 0], [0, 0, 0], [1, 0, 0]]]], dtype=torch.int32)
full_num = torch.tensor([[[0, 1, 1]], [[0, 1, 1]]], dtype=torch.int32)
full_idx = torch.tensor([[[[0, 0, 0], [0, 0, 0], [0, 0, 0]]], [[[0, 0, 0], [1, 0, 0], [2, 0, 0]]]], dtype=torch.int32)
blocks = BlockMask.from_kv_blocks(num, idx, full_num, full_idx, BLOCK_SIZE=8, mask_mod=near)
