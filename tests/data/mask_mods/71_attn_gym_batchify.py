# hasseflow-case: n=36 category=library
from attn_gym.masks import batchify_mask_mod, causal_mask, generate_sliding_window

inner = generate_sliding_window(window_size=3)
mask_mod = batchify_mask_mod(inner, 12)
