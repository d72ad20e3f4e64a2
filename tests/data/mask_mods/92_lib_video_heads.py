# hasseflow-case: n=96 category=library b=0 h=1
# Sparse video attention: spatial heads and temporal heads, chosen per head.
import torch
from attn_gym.masks import generate_spatial_head_mask_mod, generate_temporal_head_mask_mod

cfg = dict(prompt_length=8, num_frames=4, token_per_frame=22, width=1)
spatial = generate_spatial_head_mask_mod(round_width=8, **cfg)
temporal = generate_temporal_head_mask_mod(**cfg)


def mask_mod(b, h, q_idx, kv_idx):
    use_spatial = h % 2 == 0
    return (use_spatial & spatial(b, h, q_idx, kv_idx)) | (~use_spatial & temporal(b, h, q_idx, kv_idx))
