# hasseflow-case: n=72 category=lookup
"""Global tokens at random places (BigBird style), chosen by a private `random.Random` so the
choice does not depend on what else consumed the module-level generator. A few extra sink
tokens are sampled from a short list too (the other of CPython's two sampling methods)."""
import random

import torch

N = 72
rng = random.Random(99)
global_positions = rng.sample(range(N), 6)
sinks = rng.sample([0, 1, 2, 3, 4, 5, 6, 7], 3)

is_global = torch.zeros(N, dtype=torch.bool)
is_global[torch.tensor(global_positions + sinks)] = True


def mask_mod(b, h, q_idx, kv_idx):
    causal = kv_idx <= q_idx
    return causal | is_global[kv_idx] | is_global[q_idx]
