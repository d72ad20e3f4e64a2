# hasseflow-case: n=20 b=1 h=3 category=library
import torch
from transformers.masking_utils import and_masks, causal_mask_function, padding_mask_function

attention_mask = torch.tensor([[1] * 20, [0] * 4 + [1] * 16]).bool()
mask_mod = and_masks(causal_mask_function, padding_mask_function(attention_mask))
