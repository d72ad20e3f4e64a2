# hasseflow-case: n=24 category=blockmask
import torch
from torch.nn.attention.flex_attention import create_block_mask
frames = torch.tensor([0] * 6 + [1] * 6 + [2] * 6 + [3] * 6)
frame_ids, frame_of = torch.unique_consecutive(frames, return_inverse=True)
def frame_causal(b, h, q_idx, kv_idx):
    return frame_of[kv_idx] <= frame_of[q_idx]
bm = create_block_mask(frame_causal, 1, 1, 24, 24, device="cpu", BLOCK_SIZE=8)
mask_mod = bm.mask_mod
