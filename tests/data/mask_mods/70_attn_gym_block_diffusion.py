# hasseflow-case: n=32 category=library
from attn_gym.masks import generate_block_diffusion_mask

# noised tokens in [0, 16), clean tokens in [16, 32)
mask_mod = generate_block_diffusion_mask(seq_len=16, block_size=4)
