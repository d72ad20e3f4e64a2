# hasseflow-case: n=40 category=library
# Text tokens reading image tokens, Flamingo style: image i covers text rows [start, stop).
import torch
from attn_gym.masks import generate_vision_cross_attention_mask_mod

spans = torch.tensor([[0, 12], [12, 30], [25, 40], [33, 40]])
mask_mod = generate_vision_cross_attention_mask_mod(spans, image_token_length=10)
