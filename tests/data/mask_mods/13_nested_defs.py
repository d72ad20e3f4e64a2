# hasseflow-case: n=36 category=closure
import torch


def build_mask(block: int, lookback_blocks: int):
    def mask(b, h, q_idx, kv_idx):
        def block_of(i):
            return i // block

        q_block = block_of(q_idx)
        kv_block = block_of(kv_idx)
        recent = q_block - kv_block <= lookback_blocks
        return recent & (kv_block <= q_block)

    return mask


mask_mod = build_mask(block=4, lookback_blocks=2)
