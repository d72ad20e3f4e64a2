# hasseflow-case: n=18 category=wrapper
import torch
from torch.nn.attention.flex_attention import and_masks, noop_mask, or_masks

is_causal = False
base = and_masks(noop_mask, lambda b, h, q_idx, kv_idx: q_idx >= kv_idx) if is_causal else noop_mask
diag_only = lambda b, h, q_idx, kv_idx: q_idx == kv_idx
mask_mod = and_masks(base, or_masks(diag_only, lambda b, h, q_idx, kv_idx: (q_idx + kv_idx) % 4 == 1))
