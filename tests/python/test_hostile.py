#!/usr/bin/env python3
"""Hostile inputs never kill the Python interpreter (issue 30): each runs through
`hasseflow.analyze` in a child process, which must exit normally having caught a one-line
HasseflowError that names what is wrong (or, where Python and torch accept the text, having read
the mask). The core is bounded (crates/core/tests/hostile_mask_mod.rs has every case and its
torch result); a signal here (SIGSEGV on a stack overflow, SIGABRT on an allocation failure) is a
failure. Also: a path that is not a regular file (`/dev/zero`, a directory) is refused in one line
without being read.

Prints one line per failure and ends with "N passed, M failed"; exits non-zero on any failure.
"""

import os
import subprocess
import sys
import tempfile

from tally import Tally

MASK = "def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n"

# (name, text, what the HasseflowError says, or None where the mask is read)
CASES = [
    ("postfix chain of 200,000 calls", "def f(*a):\n    return f\ng = f" + "()" * 200_000 + "\n" + MASK,
     "nested too deeply"),
    ("20,000 comprehension clauses", "X = [0 " + "for a in [1] " * 20_000 + "]\n" + MASK, "nested too deeply"),
    ("a list that holds itself, compared with another", "x = []\nx.append(x)\ny = []\ny.append(y)\nS = x == y\n" + MASK,
     "RecursionError"),
    ("a 100,000-deep nested list to torch.tensor",
     "import torch\nt = 0\nfor i in range(100000):\n    t = [t]\nT = torch.tensor(t)\n" + MASK,
     "too many dimensions"),
    ("a 100,000-class inheritance chain",
     "class A:\n    w = 1\nfor i in range(100000):\n    class A(A):\n        pass\n"
     "def mask_mod(b, h, q, kv):\n    return (q >= kv) & (A.w == 1)\n", "hierarchy of bases over 200 deep"),
    ("a 30,000 partial chain",
     "from functools import partial\ndef causal(b, h, q, kv):\n    return q >= kv\nf = causal\n"
     "for i in range(30000):\n    f = partial(f)\nmask_mod = f\n", None),
    ("INT64_MIN // -1 in the traced mask",
     "M = -9223372036854775807 - 1\ndef mask_mod(b, h, q, kv):\n    return (q >= kv) & (((q * 0 + M) // -1) == M)\n",
     None),
    ("F.pad by 2**40", "import torch\nimport torch.nn.functional as F\nT = F.pad(torch.zeros(4), (0, 2 ** 40))\n" + MASK,
     "over the limit"),
    ("x += x", "x = [0] * 1000\nwhile True:\n    x += x\n" + MASK, "item limit"),
    ("lists of 1.3 GB", "X = [[0] * 100000 for _ in range(400)]\n" + MASK, "memory budget"),
]

CHILD = r"""
import sys
import hasseflow
text = sys.stdin.read()
try:
    hasseflow.analyze(text, n=4)
    print("READ")
except hasseflow.HasseflowError as e:
    print("REFUSED " + str(e))
"""


T = Tally()


def child(text, timeout=120):
    return subprocess.run([sys.executable, "-c", CHILD], input=text, capture_output=True, text=True,
                          timeout=timeout)


def main():
    for name, text, needle in CASES:
        r = child(text)
        out = r.stdout.strip()
        if r.returncode != 0:
            T.check(False, f"{name}: the interpreter died (exit {r.returncode}): {r.stderr.strip()[-300:]}")
            continue
        if needle is None:
            T.check(out == "READ", f"{name}: expected the mask to be read, got {out[:300]!r}")
        else:
            T.check(out.startswith("REFUSED ") and needle in out and "\n" not in out,
                    f"{name}: expected a one-line HasseflowError with {needle!r}, got {out[:300]!r}")
    import hasseflow

    with tempfile.TemporaryDirectory() as d:
        for path, needle in (("/dev/zero", "not a regular file"), (d, "a directory")):
            try:
                hasseflow.analyze(path)
                T.check(False, f"analyze({path!r}) was accepted")
            except hasseflow.HasseflowError as e:
                T.check(needle in str(e) and "\n" not in str(e), f"analyze({path!r}): {e}")
        big = os.path.join(d, "big.json")
        with open(big, "wb") as f:
            f.truncate(96 * 1024 * 1024 + 1)
        try:
            hasseflow.analyze(big)
            T.check(False, "a file over 96 MiB was accepted")
        except hasseflow.HasseflowError as e:
            T.check("over 100663296 bytes" in str(e), f"a file over 96 MiB: {e}")
        try:
            hasseflow.model("/dev/zero", context=64)
            T.check(False, "model('/dev/zero') was accepted")
        except hasseflow.HasseflowError as e:
            T.check("not a regular file" in str(e), f"model('/dev/zero'): {e}")
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
