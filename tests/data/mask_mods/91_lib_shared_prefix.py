# hasseflow-case: n=36 category=library
# Prompt documents shared by their continuations (GRPO-style packing).
import torch
from attn_gym.masks import generate_shared_prefix_mask_mod

doc_offsets = torch.tensor([0, 10, 17, 25, 30, 36])
prefix_of = torch.tensor([0, 0, 0, 3, 3])
mask_mod = generate_shared_prefix_mask_mod(doc_offsets, prefix_of)
