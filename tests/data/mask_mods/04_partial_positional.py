# hasseflow-case: n=100 category=factory
from functools import partial

import torch

CHUNK = 16


def chunked_causal(chunk_size, b, h, q_idx, kv_idx):
    # Llama-4-style local layers: causal inside fixed chunks
    same_chunk = (q_idx // chunk_size) == (kv_idx // chunk_size)
    return same_chunk & (kv_idx <= q_idx)


mask_mod = partial(chunked_causal, CHUNK)
