# hasseflow-case: n=24 b=0 h=0 category=library
import torch
from transformers.masking_utils import blockwise_overlay, causal_mask_function, or_masks

# -1 for text; images get a group id each and attend bidirectionally inside it
block_sequence_ids = torch.full((1, 24), -1)
block_sequence_ids[0, 3:9] = 0
block_sequence_ids[0, 14:20] = 1
mask_mod = or_masks(causal_mask_function, blockwise_overlay(block_sequence_ids))
