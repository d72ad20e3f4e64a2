# hasseflow-case: n=40 category=library
import torch
from attn_gym.masks import generate_jetspec_training_mask_mod

prefix_len, draft_block = 8, 4
mask_mod = generate_jetspec_training_mask_mod(prefix_len, draft_block)
