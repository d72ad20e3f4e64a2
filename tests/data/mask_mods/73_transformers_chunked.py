# hasseflow-case: n=40 b=1 h=0 category=library
import torch
from transformers.masking_utils import causal_mask_function, chunked_overlay, and_masks

left_padding = torch.tensor([0, 5])
mask_mod = and_masks(chunked_overlay(chunk_size=8, left_padding=left_padding), causal_mask_function)
