# hasseflow-case: n=40 entry=document_causal_mask category=library
import torch
from attn_gym.masks import causal_mask, generate_doc_mask_mod, generate_sliding_window
from attn_gym.masks.document_mask import length_to_offsets

# candidates for the inner mask; the last one assigned below is what training uses
windowed = generate_sliding_window(window_size=4)


def bidirectional(b, h, q_idx, kv_idx):
    return q_idx >= 0


lengths = [9, 14, 3, 14]
offsets = length_to_offsets(lengths, device="cpu")
document_causal_mask = generate_doc_mask_mod(windowed, offsets)
BLOCK_SIZE = 128
NUM_DOCS = len(lengths)
