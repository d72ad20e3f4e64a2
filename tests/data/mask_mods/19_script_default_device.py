# hasseflow-case: n=64 category=script
"""Benchmark of a sliding-window causal mask, FlexAttention vs SDPA."""
import time

import torch
import torch.nn.functional as F
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

torch.set_default_device("cuda")
torch.manual_seed(0)

B, H, S, D = 4, 16, 4096, 64
WINDOW = 256
print(f"shape: B={B} H={H} S={S} D={D}, window {WINDOW}")


def sliding_window_causal(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx <= WINDOW // 16)


mask_mod = sliding_window_causal


def bench(fn, *args, iters=20):
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(iters):
        fn(*args)
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / iters * 1e3


if __name__ == "__main__":
    q, k, v = (torch.randn(B, H, S, D, dtype=torch.bfloat16) for _ in range(3))
    block_mask = create_block_mask(mask_mod, None, None, S, S)
    compiled = torch.compile(flex_attention)
    print("flex ms", bench(compiled, q, k, v, block_mask=block_mask))
    print("sdpa ms", bench(F.scaled_dot_product_attention, q, k, v, is_causal=True))
