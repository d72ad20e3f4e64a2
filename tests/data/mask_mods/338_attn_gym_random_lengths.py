# hasseflow-case: n=128 category=library
"""The document-mask demo's example batch: attention-gym spreads the tokens over a few documents
at random, after the script fixes Python's seed, and the doc mask is built from their offsets."""
import random

from attn_gym.masks import causal_mask
from attn_gym.masks.document_mask import generate_doc_mask_mod, generate_random_lengths, length_to_offsets

random.seed(0)
MAX_SEQ_LEN = 128
lengths = generate_random_lengths(MAX_SEQ_LEN, 5)
offsets = length_to_offsets(lengths, "cpu")
mask_mod = generate_doc_mask_mod(causal_mask, offsets)
