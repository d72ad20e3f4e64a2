#!/usr/bin/env python3
"""The mask_mod reader on a corpus of mask code written the way training code writes it
(tests/data/mask_mods/NN_name.py), against torch's create_mask. Files 95 on cover the torch tail on
fixed tables (category tail), vector values per position (vector) and BlockMask objects
(blockmask: a BlockMask global is read as its block tables combined with its mask_mod).

Each corpus file starts with `# hasseflow-case: n=N [b=B h=H] [entry=NAME] category=WORD`. For each:
- hasseflow: `convert FILE --n N --to text` (`--batch B --head H` when the header has b/h);
- torch: the file imported as a module with CUDA sent to the CPU (mask_mod_oracle.py), its entry
  (`mask_mod`, else the last module-level 4-argument callable; the header's entry must agree) and
  `create_mask(fn, B=b+1, H=h+1, Q_LEN=n, KV_LEN=n)[b, h]`.

Outcomes: equal; WRONG (a failure); refused by hasseflow alone (allowed, but the refusal must say
`line L, column C: <construct>`, and at least 90% of the files torch runs must be equal); refused by
both (the `category=refused` files: torch must refuse those); accepted by hasseflow alone (a
failure). Prints a table by category, every refusal with its message, and ends with
"N passed, M failed".

Usage: test_mask_mod_wild.py [BIN] [--torch-only]   (BIN: else $HASSEFLOW_BIN, else
target/debug/hasseflow; --torch-only checks the corpus under torch without a binary).
"""

import glob
import os
import re
import sys
from collections import Counter, defaultdict

TORCH_ONLY = "--torch-only" in sys.argv
if TORCH_ONLY:
    sys.argv.remove("--torch-only")

import attn_gym.masks  # noqa: E402,F401 - the corpus imports these; a missing library is a failure
import transformers.masking_utils  # noqa: E402,F401

from cases import BIN, ROOT  # noqa: E402
from mask_mod_oracle import compare, entry_name, load_module, located, torch_side  # noqa: E402
from tally import Tally, exit_with  # noqa: E402

CORPUS = os.path.join(ROOT, "tests/data/mask_mods")
HEADER = re.compile(r"^# hasseflow-case:((?: +[a-z]+=[A-Za-z0-9_]+)+) *$")
KEYS = {"n", "b", "h", "entry", "category"}
CATEGORIES = ["factory", "closure", "script", "lookup", "batchhead", "wrapper", "numeric", "library", "tail", "vector",
              "blockmask", "refused"]
OUTCOMES = ["equal", "WRONG", "refused", "refused-both", "accepted-only"]

TALLY = Tally()
check = TALLY.check


def header_of(path):
    with open(path) as f:
        first = f.readline().rstrip("\n")
    m = HEADER.match(first)
    if not m:
        return None
    fields = dict(kv.split("=", 1) for kv in m.group(1).split())
    if set(fields) - KEYS or "n" not in fields or "category" not in fields:
        return None
    if fields["category"] not in CATEGORIES or ("b" in fields) != ("h" in fields):
        return None
    n, b, h = int(fields["n"]), int(fields.get("b", 0)), int(fields.get("h", 0))
    if not 8 <= n <= 300:
        return None
    return {"n": n, "b": b, "h": h, "bh": "b" in fields, "entry": fields.get("entry"),
            "category": fields["category"]}


def entry_agrees(path, case):
    """The header's entry (or mask_mod) is the one the reader's rule picks."""
    with open(path) as f:
        source = f.read()
    try:
        mod = load_module(path)
    except Exception:  # noqa: BLE001 - a module torch cannot even import has no entry to check
        return case["category"] == "refused"
    return entry_name(source, mod) == (case["entry"] or "mask_mod")


files = sorted(glob.glob(os.path.join(CORPUS, "*.py")))
check(len(files) >= 165, f"{len(files)} corpus files (at least 165)")
table = defaultdict(Counter)
notes = []
runnable = equal = 0
for path in files:
    name = os.path.basename(path)
    check(re.match(r"^\d{2,3}_[a-z0-9_]+\.py$", name) is not None, f"{name}: named NN_short_name.py")
    case = header_of(path)
    check(case is not None, f"{name}: header `# hasseflow-case: n=N [b=B h=H] [entry=NAME] category=WORD`")
    if case is None:
        continue
    cat = case["category"]
    check(entry_agrees(path, case), f"{name}: the header's entry is not the one the reader's rule picks")
    with open(path) as f:
        source = f.read()
    if TORCH_ONLY:
        theirs, why = torch_side(path, case["n"], case["b"], case["h"], case["entry"])
        if cat == "refused":
            check(theirs is None, f"{name}: torch ran a file meant to be refused by torch")
        else:
            check(theirs is not None, f"{name}: torch cannot run it: {why}")
            check(theirs is None or theirs.any(), f"{name}: the mask is empty")
        table[cat]["torch-ok" if theirs is not None else "torch-refuses"] += 1
        continue
    outcome, detail, torch_error, _ = compare(path, case["n"], case["b"], case["h"], case["bh"], case["entry"])
    table[cat][outcome] += 1
    if cat == "refused":
        check(torch_error is not None, f"{name}: torch ran a file meant to be refused by torch")
    else:
        runnable += torch_error is None
        check(torch_error is None, f"{name}: torch cannot run it: {torch_error}")
    equal += outcome == "equal"
    check(outcome != "WRONG", f"{name}: hasseflow's mask differs from torch's: {detail}")
    check(outcome != "accepted-only", f"{name}: {detail}")
    if outcome in ("refused", "refused-both"):
        check(located(detail, source), f"{name}: the refusal does not say `line L, column C: <construct>`: {detail!r}")
        notes.append(f"  {name} [{outcome}]: {detail}")

cols = ["torch-ok", "torch-refuses"] if TORCH_ONLY else OUTCOMES
print(f"{'category':<10} {'files':>5} " + " ".join(f"{c:>13}" for c in cols))
for cat in CATEGORIES + ["total"]:
    row = sum(table.values(), Counter()) if cat == "total" else table[cat]
    print(f"{cat:<10} {sum(row.values()):>5} " + " ".join(f"{row[c]:>13}" for c in cols))
if notes:
    print("refusals by hasseflow:")
    print("\n".join(notes))
if TORCH_ONLY:
    print(f"torch only: {len(files)} corpus files checked under torch, no binary run")
else:
    share = equal / runnable if runnable else 0.0
    print(f"{BIN}: {equal} of {runnable} files torch runs imported and equal ({100 * share:.1f}%)")
    check(share >= 0.9, f"only {equal} of {runnable} files torch runs are imported and equal (90% needed)")
exit_with(TALLY)
