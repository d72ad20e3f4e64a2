"""Shared by the Python tests: the hasseflow binary, and the masks every export is checked on.

The binary is the first argument, else $HASSEFLOW_BIN, else target/debug/hasseflow.
"""

import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("HASSEFLOW_BIN", os.path.join(ROOT, "target/debug/hasseflow"))


def cli(args, stdin=b"", expect_ok=True):
    p = subprocess.run([BIN, *args], input=stdin, capture_output=True)
    if expect_ok and p.returncode != 0:
        raise RuntimeError(f"hasseflow {' '.join(args)} failed: {p.stderr.decode()}")
    return p


def rows_of(mask_bytes):
    text = cli(["convert", "-", "--to", "text"], mask_bytes).stdout.decode()
    return np.array([[c == "1" for c in line] for line in text.split("\n") if line], dtype=bool)


# Every catalog preset with several parameter sets (test_flex.py checks that none is missing).
PRESET_CASES = [
    ("full", []), ("causal", []), ("strictly-causal", []), ("anti-causal", []), ("identity", []), ("cycle", []),
    ("sliding-window", []), ("sliding-window", ["w=1"]), ("sliding-window", ["w=7"]),
    ("bidirectional-window", []), ("bidirectional-window", ["r=0"]),
    ("dilated-window", []), ("dilated-window", ["w=3", "d=3"]),
    ("chunked-causal", []), ("chunked-causal", ["c=3"]), ("block-causal", []), ("block-causal", ["s=5"]),
    ("prefix-lm", []), ("prefix-lm", ["p=0"]), ("prefix-lm", ["p=7"]),
    ("document", []), ("document", ["length=3", "causal=true"]),
    ("sink-window", []), ("sink-window", ["sinks=0", "w=2"]), ("longformer", []), ("longformer", ["g=0", "r=1"]),
    ("bigbird", []), ("bigbird", ["b=2", "random=2", "seed=5"]), ("bigbird", ["b=3", "random=0", "g=0"]),
    ("strided", []), ("strided", ["l=3"]), ("fixed", []), ("fixed", ["l=3", "c=2"]),
    ("xlnet", []), ("butterfly", []), ("butterfly", ["minimal=true"]),
    ("block-two-stream", []),
]
for clean in ["full", "causal"]:
    for query in ["full", "causal"]:
        for prompt in ["0", "2"]:
            for drop in ["false", "true"]:
                for s in ["1", "3"]:
                    PRESET_CASES.append(("block-two-stream", [f"s={s}", f"clean={clean}", f"query={query}",
                                                              f"prompt={prompt}", f"drop_last={drop}"]))
            PRESET_CASES.append(("block-two-stream", ["s=2", f"clean={clean}", f"query={query}", f"prompt={prompt}",
                                                      "order=interleaved"]))

# Derived masks: derive arguments and the FlexAttention form the dense mask gets (sparse: lookup).
DERIVED = [
    (["autoregressive", "--n", "7"], "closed"),
    (["autoregressive", "--n", "7", "--pad"], "closed"),
    (["autoregressive", "--n", "5", "--bidirectional"], "lookup"),
    (["block", "--n", "6", "--block", "2"], "closed"),
    (["block", "--n", "7", "--block", "3", "--minimal"], "closed"),
    (["block", "--n", "6", "--block", "2", "--clean", "causal", "--query", "causal", "--prompt", "2"], "closed"),
    (["block", "--n", "6", "--block", "2", "--interleaved"], "closed"),
    (["butterfly", "--n", "4"], "closed"),
    (["butterfly", "--n", "5", "--minimal"], "closed"),
    (["mae", "--n", "8", "--span", "2"], "lookup"),
    ([os.path.join(ROOT, "tests/data/family_example.json")], "lookup"),
]
