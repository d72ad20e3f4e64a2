#!/usr/bin/env python3
"""Checks hasseflow's FlexAttention exports and its mask_mod importer under real PyTorch.

Runs the built `hasseflow` binary (first argument, else $HASSEFLOW_BIN, else target/debug/hasseflow)
with the project venv's torch (scripts/setup.sh installs it; this file never skips without it).

1. Every generated `--to flex` file, for every catalog preset (several parameter sets and sizes),
   derived dense and sparse masks, random painted masks up to n = 300 and kernel-parameter files
   read back, is used both ways a training script uses it:
   - imported (`import` of the file as a module): `create_mask(mask_mod, 1, 1, n, n)` equals the
     mask cell for cell; `flex_attention(q, k, v, block_mask=block_mask_for("cpu"))` equals
     `scaled_dot_product_attention` with the boolean mask within 1e-4 on random q, k, v, and rows
     that read nothing give 0; the BlockMask's `kv_num_blocks`, `full_kv_num_blocks` and
     `sparsity()` equal `--to blocks-json` for the same BLOCK_SIZE;
   - run as `__main__` (runpy): the BlockMask it builds has the same counts, and its mask_mod the
     same cells.
2. The mask_mod importer against torch: random expressions (constants, helpers, lambdas,
   and_masks/or_masks) evaluated by `hasseflow convert FILE --n N` and by torch's `create_mask`
   must agree cell for cell; texts torch cannot run are refused by both. (The wider property test
   and the corpus of real-style files are test_mask_mod_random.py and test_mask_mod_wild.py.)
3. Export -> import (`hasseflow convert export.py`) is the identity for every closed form.

Prints one line per failure and ends with "N passed, M failed"; exits non-zero on any failure.
"""

import contextlib
import importlib.util
import io
import json
import os
import random
import runpy
import shutil
import sys
import tempfile
import warnings

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.attention.flex_attention import create_mask, flex_attention

from tally import Tally, exit_with
from cases import DERIVED, PRESET_CASES, cli, rows_of

warnings.filterwarnings("ignore", message=".*flex_attention called without torch.compile.*")
torch.manual_seed(0)
TMP = tempfile.mkdtemp(prefix="hasseflow-torch-")
TALLY = Tally()
check = TALLY.check
closed_forms = 0
modules = 0



def load_module(path):
    global modules
    modules += 1
    spec = importlib.util.spec_from_file_location(f"hasseflow_mask_{modules}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def dense(mask_mod, n):
    return create_mask(mask_mod, 1, 1, n, n, device="cpu")[0, 0].numpy()


def block_counts(bm):
    full = bm.full_kv_num_blocks
    return (bm.kv_num_blocks[0, 0].tolist(), full[0, 0].tolist() if full is not None else None, bm.sparsity())


def blocks_of(stats):
    partial = [r["partial"] for r in stats["rows"]]
    full = [r["full"] for r in stats["rows"]]
    return partial, full, 100.0 * stats["sparsity"]


def same_blocks(bm, stats):
    partial, full, sparsity = blocks_of(stats)
    got_partial, got_full, got_sparsity = block_counts(bm)
    return got_partial == partial and got_full == full and abs(got_sparsity - sparsity) < 1e-9


def attention_agrees(bm, want):
    n = want.shape[0]
    q, k, v = (torch.randn(1, 2, n, 16) for _ in range(3))
    out = flex_attention(q, k, v, block_mask=bm)[0]
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.from_numpy(want))[0]
    empty = torch.from_numpy(~want.any(axis=1))
    ok_empty = bool((out[:, empty] == 0).all())
    ok_rest = bool(torch.allclose(out[:, ~empty], ref[:, ~empty], atol=1e-4, rtol=0))
    return ok_empty and ok_rest


def flex_case(what, mask_bytes, block_size):
    """One generated file, imported and run as __main__."""
    global closed_forms
    want = rows_of(mask_bytes)
    n = want.shape[0]
    path = os.path.join(TMP, f"mask_{modules}.py")
    cli(["export", "-", "--to", "flex", "--block-size", str(block_size), "-o", path], mask_bytes)
    stats = json.loads(cli(["export", "-", "--to", "blocks-json", "--block-size", str(block_size)], mask_bytes).stdout)
    with open(path) as f:
        closed = "# Closed form" in f.read()
    try:
        mod = load_module(path)
        check(mod.N == n and mod.BLOCK_SIZE == block_size, f"{what}: N and BLOCK_SIZE")
        check(np.array_equal(dense(mod.mask_mod, n), want), f"{what}: imported create_mask equals the mask")
        bm = mod.block_mask_for("cpu")
        check(same_blocks(bm, stats), f"{what}: BlockMask {block_counts(bm)} vs blocks-json {blocks_of(stats)}")
        check(attention_agrees(bm, want), f"{what}: flex_attention vs SDPA with the boolean mask")
    except Exception as e:  # noqa: BLE001 - any failure of the generated code is a failure
        check(False, f"{what}: imported: {type(e).__name__}: {e}")
    try:
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            g = runpy.run_path(path, run_name="__main__")
        check("BlockMask(" in printed.getvalue(), f"{what}: __main__ prints the BlockMask")
        check(np.array_equal(dense(g["mask_mod"], n), want), f"{what}: __main__ mask_mod equals the mask")
        check(same_blocks(g["block_mask"], stats), f"{what}: __main__ BlockMask counts")
    except Exception as e:  # noqa: BLE001
        check(False, f"{what}: as __main__: {type(e).__name__}: {e}")
    if closed:
        closed_forms += 1
        # Export -> import is the identity for closed forms.
        back = rows_of(open(path, "rb").read())
        check(np.array_equal(back, want), f"{what}: export -> import identity")


def grid_of(m):
    return ("\n".join("".join("1" if x else "." for x in row) for row in m) + "\n").encode()


# ---- 1. exports, imported and as __main__
for name, params in PRESET_CASES:
    for n in [5, 12, 33]:
        p = cli(["preset", name, "--n", str(n), *params], expect_ok=False)
        if p.returncode != 0:
            continue  # parameters out of range for this n
        flex_case(f"preset {name} n={n} {' '.join(params)}", p.stdout, 16 if n > 8 else 4)

for args, _form in DERIVED:
    for sparse in [False, True]:
        out = os.path.join(TMP, "derived.json")
        cli(["derive", *args, "--mask-out", out] + (["--sparse"] if sparse else []))
        with open(out, "rb") as f:
            flex_case(f"derive {' '.join(args)}{' --sparse' if sparse else ''}", f.read(), 4)

rng = random.Random(2026)
for i, n in enumerate([1, 2, 7, 16, 63, 64, 65, 100, 129, 200, 256, 300]):
    density = rng.choice([0.02, 0.1, 0.5, 0.9])
    m = np.array([[rng.random() < density for _ in range(n)] for _ in range(n)], dtype=bool)
    if n > 2:
        m[rng.randrange(n)] = False  # a row that reads nothing: FlexAttention gives 0 there
    flex_case(f"random #{i} n={n} density={density}", grid_of(m), rng.choice([16, 32, 64, 128]))

# Kernel parameters written by the exports, read back, exported again.
for preset, params, n in [("sliding-window", ["w=5"], 40), ("causal", [], 17), ("bidirectional-window", ["r=3"], 30),
                          ("prefix-lm", ["p=6"], 24), ("document", ["length=8", "causal=true"], 32),
                          ("sink-window", ["sinks=2", "w=4"], 20)]:
    mask = cli(["preset", preset, "--n", str(n), *params]).stdout
    for kind in ["flash", "flashmask"]:
        kernel = cli(["export", "-", "--to", kind], mask).stdout
        if b"not_representable" in kernel or b"\"representable\": false" in kernel or b"reason" in kernel:
            continue
        back = cli(["convert", "-", "--n", str(n)], kernel).stdout
        flex_case(f"{kind} file of {preset} n={n}, read back", back, 16)

# ---- 2. the mask_mod importer against torch's create_mask on random expressions of the subset
CONSTS = {"W": 3, "C": 4, "S": 2, "G": 1}


def gen_int(r, depth):
    if depth <= 0 or r.random() < 0.3:
        return r.choice(["q_idx", "kv_idx", "q_idx", "kv_idx", str(r.randrange(0, 9)), r.choice(list(CONSTS))])
    op = r.choice(["+", "-", "*", "//", "%", "&", "|", "~", "neg"])
    a = gen_int(r, depth - 1)
    if op == "~":
        return f"(~{a})"
    if op == "neg":
        return f"(-{a})"
    if op in ("//", "%"):
        return f"({a} {op} {r.choice([str(r.randrange(1, 6)), r.choice(list(CONSTS))])})"
    if op == "*":
        return f"({a} * {r.randrange(0, 4)})"
    return f"({a} {op} {gen_int(r, depth - 1)})"


def gen_bool(r, depth, helpers=()):
    if depth <= 0 or r.random() < 0.25:
        if helpers and r.random() < 0.3:
            return f"{r.choice(helpers)}(b, h, q_idx, kv_idx)"
        cmp = r.choice(["<", "<=", ">", ">=", "==", "!="])
        # One side holds an index, so every boolean is a tensor (a constant one is a Python bool,
        # where ~True is -2: the importer refuses that, checked below).
        indexed = gen_int(r, 2)
        while "idx" not in indexed:
            indexed = gen_int(r, 2)
        sides = [indexed, gen_int(r, 2)]
        r.shuffle(sides)
        return f"({sides[0]} {cmp} {sides[1]})"
    op = r.choice(["&", "|", "~", "=="])
    if op == "~":
        return f"(~{gen_bool(r, depth - 1, helpers)})"
    return f"({gen_bool(r, depth - 1, helpers)} {op} {gen_bool(r, depth - 1, helpers)})"


def gen_text(r):
    lines = ["import torch", "from torch.nn.attention.flex_attention import and_masks, or_masks", ""]
    lines += [f"{k} = {v}" for k, v in CONSTS.items()]
    helpers = []
    for j in range(r.randrange(0, 3)):
        name = f"part_{j}"
        body = gen_bool(r, 2, tuple(helpers))
        if r.random() < 0.5:
            lines.append(f"{name} = lambda b, h, q_idx, kv_idx: {body}")
        else:
            lines += ["", f"def {name}(b, h, q_idx, kv_idx):", f"    d = q_idx - kv_idx", f"    return {body}"]
        helpers.append(name)
    if len(helpers) >= 2 and r.random() < 0.4:
        lines.append(f"mask_mod = {r.choice(['and_masks', 'or_masks'])}({', '.join(helpers)})")
    else:
        lines += ["", "def mask_mod(b, h, q_idx, kv_idx):", f"    return {gen_bool(r, 3, tuple(helpers))}"]
    return "\n".join(lines) + "\n"


def torch_mask(text, n):
    path = os.path.join(TMP, f"expr_{modules}.py")
    with open(path, "w") as f:
        f.write(text)
    mod = load_module(path)
    return dense(mod.mask_mod, n)


agreed = refused_both = 0
r = random.Random(13)
for i in range(300):
    text = gen_text(r)
    n = r.choice([1, 5, 17, 40])
    ours = cli(["convert", "-", "--n", str(n), "--to", "text"], text.encode(), expect_ok=False)
    try:
        theirs = torch_mask(text, n)
        torch_error = None
    except Exception as e:  # noqa: BLE001 - torch refusing the text is an outcome we compare
        theirs, torch_error = None, f"{type(e).__name__}: {e}"
    if ours.returncode == 0 and theirs is not None:
        got = np.array([[c == "1" for c in line] for line in ours.stdout.decode().split("\n") if line], dtype=bool)
        same = np.array_equal(got, theirs)
        agreed += same
        check(same, f"expression #{i} n={n} differs from torch:\n{text}")
    elif ours.returncode != 0 and theirs is None:
        refused_both += 1
        check(True, "refused by both")
    else:
        why = torch_error or ours.stderr.decode().strip()
        check(False, f"expression #{i} n={n}: only one side refused ({why}):\n{text}")
check(agreed >= 250, f"{agreed} of 300 random expressions evaluated by both (too many refusals?)")

# A lookup into a module-level tensor is read (the interpreter runs the module), and equals torch.
lookup = "import torch\nMASK = torch.ones(8, 8, dtype=torch.bool)\nMASK[2:, 0] = False\ndef mask_mod(b, h, q_idx, kv_idx):\n    return MASK[q_idx, kv_idx]\n"
p = cli(["convert", "-", "--n", "8", "--to", "text"], lookup.encode())
got = np.array([[c == "1" for c in line] for line in p.stdout.decode().split("\n") if line], dtype=bool)
check(np.array_equal(got, torch_mask(lookup, 8)), "a module-level lookup tensor equals torch")

# What torch's vmap refuses (Python control flow on an index tensor), hasseflow refuses too, naming
# the place; a function of no index gives a Python bool, which create_mask refuses as well.
for text, needle, torch_fails in [
    ("def mask_mod(b, h, q_idx, kv_idx):\n    return (q_idx >= kv_idx) and (kv_idx >= 0)\n", "line 2, column 13: data-dependent control flow", True),
    ("mask_mod = lambda b, h, q_idx, kv_idx: True\n", "depends on neither", True),
    ("def mask_mod(b, h, q_idx, kv_idx):\n    return 0 <= kv_idx <= q_idx\n", "line 2, column 17: data-dependent control flow", True),
    ("def mask_mod(b, h, q_idx, kv_idx):\n    if q_idx > kv_idx:\n        return True\n", "line 2, column 8: data-dependent control flow", True),
]:
    p = cli(["convert", "-", "--n", "8"], text.encode(), expect_ok=False)
    msg = p.stderr.decode()
    check(p.returncode != 0 and needle in msg, f"refusal {needle!r}: got {msg.strip()!r}")
    try:
        torch_mask(text, 8)
        torch_ran = True
    except Exception:  # noqa: BLE001
        torch_ran = False
    check(torch_ran != torch_fails, f"torch {'ran' if torch_ran else 'refused'} {needle!r}")

check(closed_forms >= 150, f"{closed_forms} closed forms round-tripped")
shutil.rmtree(TMP, ignore_errors=True)
print(f"torch {torch.__version__}: {modules} modules imported, {closed_forms} closed forms, "
      f"{agreed} random expressions agreed, {refused_both} refused by both")
exit_with(TALLY)
