# hasseflow-case: n=30 category=library b=1 h=0
# Packed sequences per batch row, with the query shifted as during chunked prefill.
import torch
from transformers.masking_utils import (
    add_offsets_to_mask_function,
    and_masks,
    bidirectional_mask_function,
    causal_mask_function,
    packed_sequence_mask_function,
    sliding_window_bidirectional_mask_function,
)

packed = torch.zeros(2, 40, dtype=torch.long)
packed[0, 12:] = 1
packed[1, 5:18] = 1
packed[1, 18:] = 2
shifted = add_offsets_to_mask_function(causal_mask_function, 4, 0)
mask_mod = and_masks(packed_sequence_mask_function(packed), shifted, bidirectional_mask_function, sliding_window_bidirectional_mask_function(9))
