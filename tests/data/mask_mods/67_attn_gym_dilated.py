# hasseflow-case: n=48 category=library
from attn_gym.masks import generate_dilated_sliding_window

dilated = generate_dilated_sliding_window(window_size=6, dilation=2)
mask_mod = dilated
