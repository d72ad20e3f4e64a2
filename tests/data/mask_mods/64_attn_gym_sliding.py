# hasseflow-case: n=40 category=library
import torch
from attn_gym.masks import generate_sliding_window

mask_mod = generate_sliding_window(window_size=8)
