#!/usr/bin/env python3
"""Checks hasseflow's exports with real NumPy, without PyTorch.

Runs the built `hasseflow` binary (first argument, else $HASSEFLOW_BIN, else target/debug/hasseflow):
- FlexAttention: for presets (every catalog entry, many parameter sets), derived masks and random
  masks, execs the generated Python and evaluates mask_mod(0, 0, q_idx, kv_idx) on broadcast NumPy
  index arrays, comparing with the mask rows the CLI prints; presets and derived masks must get
  the closed form, painted masks the lookup table (row strings and base64 bits).
- NumPy .npy: export -> numpy.load, numpy.save (several dtypes, Fortran order) -> import, and
  malformed arrays refused with a message naming the problem.
- JSON: the loader snippet in docs/FORMAT.md runs and reads rows and packed files.
- Block statistics: tile counts against a NumPy reimplementation.
Prints one line per failure and ends with "N passed, M failed"; exits non-zero on any failure.
"""

import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

# The exports must evaluate with NumPy alone: make `import torch` fail inside the generated code
# (test_torch.py covers the same files with torch).
sys.modules["torch"] = None

from tally import Tally, exit_with
from cases import DERIVED, PRESET_CASES, ROOT, cli, rows_of

TMP = tempfile.mkdtemp(prefix="hasseflow-py-")
TALLY = Tally()
check = TALLY.check



def eval_flex(code, n):
    ns = {"__name__": "hasseflow_generated"}
    exec(compile(code, "<generated>", "exec"), ns)
    q = np.arange(n).reshape(n, 1)
    kv = np.arange(n).reshape(1, n)
    out = np.asarray(ns["mask_mod"](0, 0, q, kv))
    if out.dtype != np.bool_:
        raise TypeError(f"mask_mod returned dtype {out.dtype}, not bool")
    return np.broadcast_to(out, (n, n))


def flex_case(what, mask_bytes, want_form, block_size=None):
    want = rows_of(mask_bytes)
    args = ["export", "-", "--to", "flex"] + (["--block-size", str(block_size)] if block_size else [])
    code = cli(args, mask_bytes).stdout.decode()
    form = "closed" if "# Closed form" in code else "lookup"
    try:
        got = eval_flex(code, want.shape[0])
        ok = np.array_equal(got, want)
        detail = "" if ok else f": differs at {np.argwhere(got != want)[:3].tolist()}"
    except Exception as e:  # noqa: BLE001 - report any failure of the generated code
        ok, detail = False, f": {type(e).__name__}: {e}"
    check(ok, f"flex {what}{detail}")
    if want_form is not None:
        check(form == want_form, f"flex {what}: expected the {want_form} form, got {form}")


# Every catalog entry is covered.
catalog = [l.split()[0] for l in cli(["preset", "--list"]).stdout.decode().splitlines() if l and not l[0].isspace()]
check(set(catalog) - {"random"} <= {name for name, _ in PRESET_CASES}, "every preset has a closed-form case")

for name, params in PRESET_CASES:
    for n in [1, 2, 5, 12, 33]:
        if name == "butterfly" and n < 2:
            continue
        p = cli(["preset", name, "--n", str(n), *params], expect_ok=False)
        if p.returncode != 0:
            continue  # parameters out of range for this n
        form = "closed"
        if name == "block-two-stream" and "order=interleaved" in params and n % 2:
            form = "lookup"
        flex_case(f"preset {name} n={n} {' '.join(params)}", p.stdout, form, block_size=16 if n > 8 else 4)
# A preset with explicit segments, and the random preset (lookup).
flex_case("preset document segments=1,3,2", cli(["preset", "document", "--n", "6", "segments=1,3,2"]).stdout, "closed")
for seed in range(3):
    m = cli(["preset", "random", "--n", "20", "p=0.3", f"seed={seed}"]).stdout
    flex_case(f"preset random seed={seed}", m, "lookup")

# Derived masks (derive --mask-out records the preset it rebuilds; sparse and other families use lookup).
for args, form in DERIVED:
    for sparse in [False, True]:
        out = os.path.join(TMP, "derived.json")
        cli(["derive", *args, "--mask-out", out] + (["--sparse"] if sparse else []))
        with open(out, "rb") as f:
            data = f.read()
        flex_case(f"derive {' '.join(args)}{' --sparse' if sparse else ''}", data, "lookup" if sparse else form)

# Random painted masks: lookup as row strings (n <= 64) and as base64 bits (n > 64).
rng = random.Random(1234)
for i in range(40):
    n = rng.choice([1, 2, 3, 7, 16, 63, 64, 65, 100, 129])
    density = rng.random()
    grid = "\n".join("".join("1" if rng.random() < density else "." for _ in range(n)) for _ in range(n)) + "\n"
    flex_case(f"random #{i} n={n}", grid.encode(), "lookup", block_size=rng.choice([1, 4, 16, 128]))

# .npy: export -> numpy.load is the identity, numpy.save -> import is the identity.
for i in range(12):
    n = rng.choice([1, 3, 8, 65])
    m = np.array([[rng.random() < 0.4 for _ in range(n)] for _ in range(n)], dtype=bool)
    grid = "\n".join("".join("1" if x else "." for x in row) for row in m) + "\n"
    path = os.path.join(TMP, "m.npy")
    cli(["export", "-", "--to", "npy", "-o", path], grid.encode())
    loaded = np.load(path)
    check(loaded.dtype == np.bool_ and loaded.shape == (n, n) and np.array_equal(loaded, m), f"npy export n={n}")
    for dtype, fortran in [(bool, False), (np.int64, False), (np.uint8, True), (">i4", False), (np.float32, True)]:
        arr = np.asfortranarray(m.astype(dtype)) if fortran else np.ascontiguousarray(m.astype(dtype))
        np.save(path, arr)
        with open(path, "rb") as f:
            back = rows_of(f.read())
        check(np.array_equal(back, m), f"npy import n={n} dtype={np.dtype(dtype).str} fortran={fortran}")


def refused(arr, needle):
    path = os.path.join(TMP, "bad.npy")
    np.save(path, arr)
    p = cli(["analyze", path], expect_ok=False)
    msg = p.stderr.decode()
    check(p.returncode != 0 and needle in msg, f"malformed npy {needle!r}: got rc={p.returncode} {msg.strip()!r}")


refused(np.zeros((2, 3), dtype=bool), "shape (2, 3)")
refused(np.zeros((2, 2, 2), dtype=bool), "shape (2, 2, 2)")
refused(np.array([[0, 2], [1, 1]], dtype=np.int8), "cell (0, 1) holds 2")
refused(np.array([[0.5]], dtype=np.float64), "holds 0.5")
refused(np.zeros((2, 2), dtype=np.complex64), "dtype \"<c8\" is not supported")
with open(os.path.join(TMP, "bad.npy"), "wb") as f:
    f.write(b"\x93NUMPY\x01\x00\x40\x00{'descr': '|b1'")
p = cli(["analyze", os.path.join(TMP, "bad.npy")], expect_ok=False)
check(p.returncode != 0 and "truncated" in p.stderr.decode(), "truncated npy refused")

# JSON: the docs/FORMAT.md snippet loads rows and packed files; malformed JSON is refused clearly.
with open(os.path.join(ROOT, "docs/FORMAT.md")) as f:
    doc = f.read()
snippet = re.search(r"## Loading a mask in Python\n```python\n(.*?)```", doc, re.S)
check(snippet is not None, "docs/FORMAT.md has the Python loader")
if snippet:
    ns = {}
    exec(snippet.group(1), ns)
    for n, enc in [(5, "rows"), (5, "packed"), (70, "packed"), (9, "auto")]:
        m = np.array([[rng.random() < 0.5 for _ in range(n)] for _ in range(n)], dtype=bool)
        grid = "\n".join("".join("1" if x else "." for x in row) for row in m) + "\n"
        path = os.path.join(TMP, "m.json")
        cli(["convert", "-", "--encoding", enc, "-o", path], grid.encode())
        check(np.array_equal(ns["load_mask"](path), m), f"docs loader n={n} {enc}")
for text, needle in [(b'{"format": "hasseflow-mask", "version": 1, "n": 2, "rows": ["1.", "1x"]}', "row 1, column 1"),
                     (b'{"format": "hasseflow-mask", "version": 2}', "version 2"),
                     (b'{"format": ', "malformed JSON at line 1")]:
    p = cli(["analyze", "-"], text, expect_ok=False)
    check(p.returncode != 0 and needle in p.stderr.decode(), f"malformed JSON {needle!r}: {p.stderr.decode().strip()!r}")

# Block statistics against NumPy.
for i in range(10):
    n = rng.choice([5, 16, 33, 100])
    b = rng.choice([1, 4, 16, 128])
    m = np.array([[k <= q or rng.random() < 0.1 for k in range(n)] for q in range(n)], dtype=bool)
    grid = "\n".join("".join("1" if x else "." for x in row) for row in m) + "\n"
    stats = json.loads(cli(["export", "-", "--to", "blocks-json", "--block-size", str(b)], grid.encode()).stdout)
    full = partial = empty = 0
    for bq in range(0, n, b):
        for bk in range(0, n, b):
            tile = m[bq:bq + b, bk:bk + b]
            whole = tile.shape == (b, b) and tile.all()  # a tile cut short by n is never full (torch pads)
            full += whole
            partial += tile.any() and not whole
            empty += not tile.any()
    t = stats["total"]
    check((t["full"], t["partial"], t["empty"]) == (full, partial, empty), f"blocks n={n} b={b}")

shutil.rmtree(TMP, ignore_errors=True)
exit_with(TALLY)
