# hasseflow-case: n=40 category=library
from transformers.masking_utils import and_masks, causal_mask_function, sliding_window_overlay

sliding_window = 6
mask_mod = and_masks(causal_mask_function, sliding_window_overlay(sliding_window))
