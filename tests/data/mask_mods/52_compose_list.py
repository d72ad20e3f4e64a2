# hasseflow-case: n=44 category=wrapper
import torch
from torch.nn.attention.flex_attention import and_masks


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def not_too_far(b, h, q_idx, kv_idx):
    return q_idx - kv_idx <= 20


def skip_odd_keys(b, h, q_idx, kv_idx):
    return (kv_idx % 2 == 0) | (kv_idx == q_idx)


parts = [causal, not_too_far]
parts.append(skip_odd_keys)
mask_mod = and_masks(*parts)
