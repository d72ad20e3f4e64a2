# hasseflow-case: n=64 category=factory
"""Causal sliding-window attention, the mask picked by a factory call at module level."""

import torch
from torch.nn.attention.flex_attention import create_block_mask


def generate_sliding_window(window_size: int):
    """Each query sees itself and the `window_size` keys before it."""

    def sliding_window_causal(b, h, q_idx, kv_idx):
        causal = q_idx >= kv_idx
        near = q_idx - kv_idx <= window_size
        return causal & near

    sliding_window_causal.__name__ = f"sliding_window_{window_size}"
    return sliding_window_causal


mask_mod = generate_sliding_window(window_size=8)

if __name__ == "__main__":
    block_mask = create_block_mask(mask_mod, B=None, H=None, Q_LEN=1024, KV_LEN=1024, device="cuda")
    print(block_mask)
