# hasseflow-case: n=32 category=library
import torch
from attn_gym.masks import causal_mask, generate_prefix_lm_mask
from torch.nn.attention.flex_attention import create_block_mask

prefix_length = 10
mask_mod = generate_prefix_lm_mask(prefix_length=prefix_length)

if __name__ == "__main__":
    print(create_block_mask(mask_mod, 1, 1, 1024, 1024, device="cuda"))
    print(create_block_mask(causal_mask, 1, 1, 1024, 1024, device="cuda"))
