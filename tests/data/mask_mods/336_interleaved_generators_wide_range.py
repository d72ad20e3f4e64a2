# hasseflow-case: n=60 category=lookup
"""Two example streams: hashed segment ids from a wide range (drawn from torch's default generator,
seeded globally) and a narrow int32 jitter from an explicit generator, the two drawn interleaved."""
import torch

torch.manual_seed(2**32 + 5)
N = 60
side = torch.Generator().manual_seed(-3)

first = torch.randint(0, 2**31, (4,))
jitter = torch.randint(-2, 3, (N,), dtype=torch.int32, generator=side)
second = torch.randint(2**30, (4,))
buckets = torch.cat([first, second]) % 5
segment = (torch.arange(N) + jitter.long()).clamp(0, N - 1) // 8


def mask_mod(b, h, q_idx, kv_idx):
    same = buckets[segment[q_idx]] == buckets[segment[kv_idx]]
    return same & (kv_idx <= q_idx)
