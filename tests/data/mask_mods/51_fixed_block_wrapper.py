# hasseflow-case: n=60 category=wrapper
import torch


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def fixed_block(mask_fn, fixed_block_size: int):
    """Applies `mask_fn` inside blocks of `fixed_block_size` tokens; no attention across blocks."""

    def blocked(b, h, q_idx, kv_idx):
        q_block = q_idx // fixed_block_size
        kv_block = kv_idx // fixed_block_size
        q_in_block = q_idx % fixed_block_size
        kv_in_block = kv_idx % fixed_block_size
        return (q_block == kv_block) & mask_fn(b, h, q_in_block, kv_in_block)

    blocked.__name__ = f"fixed_block_{fixed_block_size}_{mask_fn.__name__}"
    return blocked


mask_mod = fixed_block(causal, 16)
