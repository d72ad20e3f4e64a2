# hasseflow-case: n=24 category=closure
import torch
from torch.nn.attention.flex_attention import and_masks

IS_DECODER = False
PAD_FROM = 20


def get_attention_mask_mod(is_decoder: bool):
    if is_decoder:
        return lambda b, h, q_idx, kv_idx: q_idx >= kv_idx
    # encoder: every position reads every position
    return lambda b, h, q_idx, kv_idx: torch.ones_like(q_idx, dtype=torch.bool)


def not_padding(b, h, q_idx, kv_idx):
    return kv_idx < PAD_FROM


mask_mod = and_masks(get_attention_mask_mod(IS_DECODER), not_padding)
