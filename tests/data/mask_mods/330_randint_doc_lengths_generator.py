# hasseflow-case: n=96 category=lookup
"""A packed example batch for a quick smoke run: document lengths drawn once, at import, from a
seeded generator of its own (so the global RNG state of the training script is left alone)."""
import torch
from torch.nn.attention.flex_attention import create_block_mask

SEQ_LEN = 96
_gen = torch.Generator(device="cpu")
_gen.manual_seed(1234)

doc_lengths = torch.randint(5, 21, (12,), generator=_gen)
doc_ids = torch.repeat_interleave(torch.arange(doc_lengths.numel()), doc_lengths)[:SEQ_LEN]


def mask_mod(b, h, q_idx, kv_idx):
    same_doc = doc_ids[q_idx] == doc_ids[kv_idx]
    return same_doc & (kv_idx <= q_idx)
