# hasseflow-case: n=256 entry=block_mask category=blockmask
"""Block tables written by hand: a block-level causal picture ordered with argsort, then flip,
as speed-run training scripts build their BlockMask without create_block_mask."""
import torch
from torch.nn.attention.flex_attention import BlockMask

BLOCK = 64
seg = torch.zeros(256, dtype=torch.long)
seg[100:] = 1
seg[200:] = 2


def same_segment_causal(b, h, q_idx, kv_idx):
    return (seg[q_idx] == seg[kv_idx]) & (kv_idx <= q_idx)


def order(dense):
    counts = dense.sum(dim=-1, dtype=torch.int32)
    cols = dense.argsort(dim=-1, descending=False, stable=True).flip(-1).to(torch.int32)
    return counts[None, None].contiguous(), cols[None, None].contiguous()


blocks = torch.arange(256 // BLOCK)
lo = seg.view(-1, BLOCK)[:, 0]
hi = seg.view(-1, BLOCK)[:, -1]
touch = (blocks[:, None] >= blocks) & (lo[:, None] <= hi)
whole = (blocks[:, None] > blocks) & (lo[:, None] == hi) & (hi[:, None] == lo)
part_n, part_i = order(touch & ~whole)
full_n, full_i = order(whole)
block_mask = BlockMask.from_kv_blocks(
    torch.clamp_max(part_n, torch.clamp_min(2 - full_n, 1)),
    part_i,
    torch.clamp_max(full_n, 1),
    full_i,
    BLOCK_SIZE=BLOCK,
    mask_mod=same_segment_causal,
)
