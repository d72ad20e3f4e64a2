# hasseflow-case: n=12 category=library
# Speculative decoding over a draft tree: each node reads the prompt and its ancestors.
import torch
from attn_gym.masks import build_tree_ancestor_matrix, generate_jetspec_tree_causal_mask_mod

parents = [-1, 0, 0, 1, 1, 2, 5, 6, 3, 3, 9, 4]
ancestors = build_tree_ancestor_matrix(parents, device="cpu")
PROMPT = 0
mask_mod = generate_jetspec_tree_causal_mask_mod(PROMPT, ancestors)
