#!/usr/bin/env python3
"""Figures for the Python package (docs/BENCHMARKS.md, "The Python package"), each beside the
obvious alternative in the same run: the CLI (a process per call, the mask_mod read from its text).

    ~/.cache/hasseflow/venv/bin/python python/benchmarks.py [path/to/hasseflow]

1. A causal mask_mod at n = 8192, evaluated by torch (create_mask in row chunks) and analysed densely:
   the first call in a process (torch's one-time set-up included) and the median of 5 warm calls,
   split into torch's evaluation and the core; the CLI on the same mask_mod's source.
2. A document-causal BlockMask at n = 131072 (64 documents of 2048; 128-blocks, built with
   BlockMask.from_kv_blocks as a GPU's create_block_mask would give it): analysed at its real length
   on the structured engine; the CLI on the mask_mod's source at the same n.
3. Callables above the dense limit (issue 31): a sliding window of 1024 over a global and a
   document-causal closure over a lookup tensor, at 16384, 32768 and 131072, by block bounds (blocks
   proved full or empty without their cells, partial blocks through torch, rows on the structured
   engine) beside the former route (every cell through torch's create_mask in row chunks), the
   latter only up to 32768 (it is quadratic).
4. model() against `hasseflow model NAME --context 131072 --json` on five gallery models: the wall
   time of each (the CLI's includes its process start) and the engine's own reach time inside both.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
from torch.nn.attention.flex_attention import BlockMask

import hasseflow
from hasseflow import _inputs, _native

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/hasseflow"
TMP = tempfile.mkdtemp(prefix="hasseflow-bench-")


def wall(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def cli_wall(*args):
    t = time.perf_counter()
    out = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, check=True)
    return time.perf_counter() - t, out.stdout


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def bench_causal():
    n = 8192
    first, r = wall(lambda: hasseflow.analyze(causal, n=n))
    warm = [wall(lambda: hasseflow.analyze(causal, n=n))[0] for _ in range(5)]
    ev = statistics.median(wall(lambda: _inputs.mask_mod_dense(causal, n))[0] for _ in range(3))
    words = _inputs.words_of(_inputs.mask_mod_dense(causal, n))
    core = statistics.median(wall(lambda: _native.analyze_words(words, n))[0] for _ in range(3))
    src = os.path.join(TMP, "causal.py")
    with open(src, "w") as f:
        f.write("def causal(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n")
    cli = statistics.median(cli_wall("analyze", src, "--n", n, "--json")[0] for _ in range(3))
    print(f"causal mask_mod n={n}: L*={r.L_star}; first call {first:.3f} s, warm median {statistics.median(warm):.3f} s "
          f"(torch evaluation {ev:.3f} s, core {core:.3f} s); CLI on its source {cli:.3f} s")


def document_block_mask(lengths, bs=128):
    n = sum(lengths)
    doc = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))
    nb = -(-n // bs)
    d = doc.numpy()
    pad = np.concatenate([d, np.full(nb * bs - n, d[-1])]).reshape(nb, bs)
    lo, hi = pad.min(1), pad.max(1)
    i, j = np.arange(nb)[:, None], np.arange(nb)[None, :]
    touch = (j <= i) & (lo[i] <= hi[j])
    full = (j < i) & (lo[i] == hi[i]) & (lo[j] == hi[j]) & (lo[i] == lo[j])

    def pack(m):
        idx = np.zeros((nb, nb), dtype=np.int32)
        for r in range(nb):
            c = np.nonzero(m[r])[0]
            idx[r, :len(c)] = c
        return torch.tensor(m.sum(1), dtype=torch.int32)[None, None], torch.tensor(idx)[None, None]

    (kn, ki), (fn, fi) = pack(touch & ~full), pack(full)

    def document_causal(b, h, q_idx, kv_idx):
        return (doc[q_idx] == doc[kv_idx]) & (q_idx >= kv_idx)

    return BlockMask.from_kv_blocks(kn, ki, fn, fi, BLOCK_SIZE=bs, mask_mod=document_causal, seq_lengths=(n, n))


def bench_block_mask():
    lengths = [2048] * 64
    bm = document_block_mask(lengths)
    first, r = wall(lambda: hasseflow.analyze(bm))
    warm = statistics.median(wall(lambda: hasseflow.analyze(bm))[0] for _ in range(3))
    rows = statistics.median(wall(lambda: _inputs.block_mask_rows(bm))[0] for _ in range(3))
    src = os.path.join(TMP, "docs.py")
    with open(src, "w") as f:
        f.write("def document_causal(b, h, q_idx, kv_idx):\n"
                "    return (q_idx // 2048 == kv_idx // 2048) & (q_idx >= kv_idx)\n")
    cli, out = cli_wall("analyze", src, "--n", sum(lengths), "--json")
    same = json.loads(out)["reach"] == r.json["reach"]
    print(f"document BlockMask n={sum(lengths)} (64 documents): L*={r.L_star}; first call {first:.3f} s, warm {warm:.3f} s "
          f"(block decoding and partial blocks by torch {rows:.3f} s); CLI on the mask_mod's source {cli:.3f} s "
          f"(same report: {same})")


WINDOW = 1024


def window_global(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx < WINDOW)


def bench_callables():
    from torch.nn.attention.flex_attention import create_mask

    setup, _ = wall(lambda: create_mask(causal, 1, 1, 128, 128, device="cpu"))
    print(f"torch's one-time create_mask set-up (paid once a process, by either route): {setup:.2f} s")
    for n in (16384, 32768, 131072):
        doc = torch.arange(n) // 2048

        def document_causal(b, h, q_idx, kv_idx):
            return (doc[q_idx] == doc[kv_idx]) & (q_idx >= kv_idx)

        for name, f in (("window over a global", window_global), ("document closure", document_causal)):
            t, r = wall(lambda: hasseflow.analyze(f, n=n))
            line = f"callable {name} n={n}: by blocks {t:.2f} s (L*={r.L_star}, notes {len(r.notes)})"
            if n <= 32768:
                old, rows = wall(lambda: _inputs.mask_mod_rows(f, n))
                t2, r2 = wall(lambda: _native.analyze_rows(n, *rows, None))
                same = json.loads(r2) == r.json
                line += f"; every cell through torch {old + t2:.2f} s (same report: {same})"
            print(line, flush=True)


def bench_model():
    for name in ["mistral-7b-v0.1", "gemma-3-27b-it", "llama-4-scout-17b-16e", "jamba-1.5-mini", "t5-base"]:
        cli = []
        cli_reach = []
        for _ in range(3):
            t, out = cli_wall("model", name, "--context", 131072, "--json")
            cli.append(t)
            cli_reach.append(json.loads(out)["timings_ms"]["reach"] / 1e3)
        py = []
        py_reach = []
        for _ in range(3):
            t, r = wall(lambda: hasseflow.model(name, context=131072))
            py.append(t)
            py_reach.append(r.timings_ms["reach"] / 1e3)
        c, p = statistics.median(cli), statistics.median(py)
        print(f"model {name} n=131072: python {p:.3f} s (reach {statistics.median(py_reach):.3f} s), "
              f"CLI {c:.3f} s (reach {statistics.median(cli_reach):.3f} s): python/CLI = {p / c:.2f}")


if __name__ == "__main__":
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}, CLI {BIN}")
    bench_causal()
    bench_block_mask()
    bench_callables()
    bench_model()
