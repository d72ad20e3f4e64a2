# hasseflow-case: n=56 category=wrapper
import torch
from torch.nn.attention.flex_attention import and_masks, or_masks

SINKS = 4
WINDOW = 12


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def window(b, h, q_idx, kv_idx):
    return q_idx - kv_idx < WINDOW


def sink(b, h, q_idx, kv_idx):
    return kv_idx < SINKS


# StreamingLLM: attention sinks plus a causal sliding window
mask_mod = and_masks(causal, or_masks(window, sink))
