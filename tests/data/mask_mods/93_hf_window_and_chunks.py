# hasseflow-case: n=50 category=library b=1 h=0
# Transformers' ready-made masks: a sliding window or left-padded chunks, by layer kind.
import torch
from transformers.masking_utils import chunked_causal_mask_function, sliding_window_causal_mask_function, or_masks

left_pad = torch.tensor([0, 3])
LAYER_KIND = "chunked"
if LAYER_KIND == "sliding":
    mask_mod = sliding_window_causal_mask_function(6)
else:
    mask_mod = or_masks(chunked_causal_mask_function(8, left_pad), sliding_window_causal_mask_function(2))
