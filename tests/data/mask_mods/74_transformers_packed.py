# hasseflow-case: n=30 b=1 h=1 category=library
import torch
from transformers.masking_utils import (
    and_masks,
    causal_mask_function,
    or_masks,
    packed_sequence_mask_function,
    sliding_window_bidirectional_overlay,
)

packed_sequence_mask = torch.tensor([
    [1] * 12 + [2] * 18,
    [1] * 5 + [2] * 10 + [3] * 15,
])
mask_mod = and_masks(
    packed_sequence_mask_function(packed_sequence_mask),
    or_masks(causal_mask_function, sliding_window_bidirectional_overlay(2)),
)
