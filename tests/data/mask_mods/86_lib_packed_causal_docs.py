# hasseflow-case: n=48 category=library
# Packed causal documents from attention-gym's offsets helper.
import torch
from attn_gym.masks import generate_packed_causal_doc_mask_mod
from attn_gym.masks.document_mask import length_to_offsets

seq_lengths = [11, 4, 19, 14]
offsets = length_to_offsets(seq_lengths, device="cpu")
mask_mod = generate_packed_causal_doc_mask_mod(offsets)
