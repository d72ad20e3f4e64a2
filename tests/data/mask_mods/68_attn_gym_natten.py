# hasseflow-case: n=64 category=library
import torch
from attn_gym.masks import generate_natten

CANVAS = (8, 8)
KERNEL = (3, 5)
mask_mod = generate_natten(canvas_w=CANVAS[0], canvas_h=CANVAS[1], kernel_w=KERNEL[0], kernel_h=KERNEL[1])
