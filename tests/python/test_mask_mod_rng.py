#!/usr/bin/env python3
"""Seeded random draws in a mask_mod module (crates/mask_mod/src/random.rs) against torch and CPython:
generated modules seed torch's default generator, an explicit `torch.Generator` and `random`, draw
from them interleaved (`torch.randint` over narrow and wide ranges and several dtypes, `torch.rand`
in float32 and float64, `torch.randperm`, `random.random`, `random.randint`, `random.sample` by both
of CPython's methods, `random.shuffle`), and combine the draws into a per-position value V; the mask
`V[q] > V[k]` shows their order, so one value drawn differently changes cells. Each module is run by
torch's create_mask and by `hasseflow convert FILE --n 24 --to text` (mask_mod_oracle.py) and must
be equal cell for cell: a refusal fails too, since every draw here is one the reader reproduces.

Usage: test_mask_mod_rng.py [BIN] [CASES]   (CASES: 80 unless given; a fixed sample)
"""

import os
import random
import sys
import tempfile

CASES = int(sys.argv.pop(2)) if len(sys.argv) > 2 else 80

from mask_mod_oracle import compare  # noqa: E402
from tally import Tally, exit_with  # noqa: E402

N = 24


def draw_expr(rnd, gen):
    g = f", generator={gen}" if gen else ""
    k = rnd.randrange(8)
    if k == 0:
        lo = rnd.choice([0, -5, 3, -2**40])
        hi = lo + rnd.choice([2, 7, 100, 2**28 - 1, 2**28, 2**31, 2**33, 2**40])
        small = hi - lo < 2**24 and lo > -2**24
        dt = rnd.choice(["", ", dtype=torch.int32", ", dtype=torch.float64", ", dtype=torch.float32"]) if small else ""
        return f"torch.randint({lo}, {hi}, (N,){g}{dt}).double()"
    if k == 1:
        return f"torch.rand(N{g}, dtype=torch.float64)"
    if k == 2:
        return f"torch.rand((N,){g}, dtype=torch.float32).double()"
    if k == 3:
        return f"torch.randperm(N{g}).double()"
    if k == 4:
        return "torch.tensor([random.random() for _ in range(N)], dtype=torch.float64)"
    if k == 5:
        return f"torch.tensor(random.sample(range({rnd.choice([N, 30, 1000, 10**12])}), N), dtype=torch.float64)"
    if k == 6:
        return "torch.tensor(shuffled(list(range(N))), dtype=torch.float64)"
    return f"torch.tensor([random.randint(-3, {rnd.choice([3, 10, 2**40])}) for _ in range(N)], dtype=torch.float64)"


def module(rnd):
    seeds = [rnd.choice([0, 1, 42, 2**32 + 5, -3, 2**62 + 11, rnd.randrange(2**40)]) for _ in range(3)]
    lines = ["import random", "import torch", f"N = {N}", f"torch.manual_seed({seeds[0]})", f"random.seed({seeds[1]})",
             f"g = torch.Generator().manual_seed({seeds[2]})", "",
             "def shuffled(xs):\n    random.shuffle(xs)\n    return xs\n"]
    lines += [f"A{i} = " + draw_expr(rnd, rnd.choice(["g", None])) for i in range(4)]
    lines.append("V = A0 + A1 * 3 + A2 * 7 - A3")
    lines.append("\n\ndef mask_mod(b, h, q, k):\n    return V[q] > V[k]\n")
    return "\n".join(lines)


def run():
    t = Tally()
    rnd = random.Random(30)
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(CASES):
            text = module(rnd)
            path = os.path.join(tmp, f"rng_{i}.py")
            with open(path, "w") as f:
                f.write(text)
            outcome, detail, torch_error, _ = compare(path, N)
            t.check(outcome == "equal", f"case {i}: {outcome}: {detail} {torch_error or ''}\n{text}")
    exit_with(t)


if __name__ == "__main__":
    run()
