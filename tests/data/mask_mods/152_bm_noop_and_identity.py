# hasseflow-case: n=16 category=blockmask
import torch
from torch.nn.attention.flex_attention import _identity, _mask_mod_signature, and_masks, noop_mask
score_mod = _identity
def window(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx >= 0) & (q_idx - kv_idx < 5)
mask_mod: _mask_mod_signature = and_masks(noop_mask, window)
