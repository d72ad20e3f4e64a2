# hasseflow-case: n=90 category=factory
import torch
from torch.nn.attention.flex_attention import and_masks


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def chunked(chunk_size):
    def same_chunk(b, h, q_idx, kv_idx):
        return q_idx // chunk_size == kv_idx // chunk_size

    return same_chunk


attention_chunk_size = 24
mask_mod = and_masks(causal, chunked(attention_chunk_size))
