# hasseflow-case: n=24 category=script
import torch

try:
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    HAS_FLEX = True
except ImportError:  # older torch
    HAS_FLEX = False

DOC_LEN = 6


def mask_mod(b, h, q_idx, kv_idx):
    same_doc = (q_idx // DOC_LEN) == (kv_idx // DOC_LEN)
    return same_doc & (q_idx >= kv_idx)


if not HAS_FLEX:
    raise SystemExit("needs torch >= 2.5")
