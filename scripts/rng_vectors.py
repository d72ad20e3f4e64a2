#!/usr/bin/env python3
"""Prints draws of CPython's `random` and torch's CPU generator: the expected values of the unit
tests in crates/mask_mod/src/random.rs were printed by this script in the test venv
(`~/.cache/hasseflow/venv/bin/python scripts/rng_vectors.py`)."""
import random, torch
def show(name, v): print(f"{name}: {v}")
for s in [0, 1, 42, 2**32 + 5, -7, 2**63 - 1]:
    r = random.Random(s)
    show(f"py getrandbits32 seed={s}", [r.getrandbits(32) for _ in range(3)])
r = random.Random(42); show("py random seed=42", [r.random() for _ in range(2)])
r = random.Random(0); show("py randint(1,6) seed=0", [r.randint(1, 6) for _ in range(8)])
r = random.Random(5); show("py getrandbits(40), (64) seed=5", [r.getrandbits(40), r.getrandbits(64)])
r = random.Random(3); x = list(range(10)); r.shuffle(x); show("py shuffle(range 10) seed=3", x)
r = random.Random(9); show("py sample(range(100),5) seed=9 (set branch)", r.sample(range(100), 5))
r = random.Random(9); show("py sample(range(10),4) seed=9 (pool branch)", r.sample(range(10), 4))
for s in [0, 1, 42, 2**32 + 5, 2**40 + 3]:
    g = torch.Generator().manual_seed(s)
    show(f"torch randint(0,2**32) seed={s}", torch.randint(0, 2**32, (3,), generator=g).tolist())
g = torch.Generator().manual_seed(42); show("torch randint(0,10,(6,)) seed=42", torch.randint(0, 10, (6,), generator=g).tolist())
g = torch.Generator().manual_seed(42); show("torch randint(0,2**30,(3,)) seed=42", torch.randint(0, 2**30, (3,), generator=g).tolist())
g = torch.Generator(); show("torch Generator() default randint(0,100,(4,))", torch.randint(0, 100, (4,), generator=g).tolist())
g = torch.Generator().manual_seed(1); show("torch rand(3) seed=1", [float(x) for x in torch.rand(3, generator=g)])
g = torch.Generator().manual_seed(1); show("torch rand(2, float64) seed=1", torch.rand(2, generator=g, dtype=torch.float64).tolist())
g = torch.Generator().manual_seed(7); show("torch randperm(10) seed=7", torch.randperm(10, generator=g).tolist())
# a stream past one twist (624 draws)
g = torch.Generator().manual_seed(0); show("torch randint(0,2**32,(1000,))[620:626] seed=0", torch.randint(0, 2**32, (1000,), generator=g)[620:626].tolist())
