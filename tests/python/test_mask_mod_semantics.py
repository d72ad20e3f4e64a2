"""Issue 30's semantic reproducers for the mask_mod reader (tests/data/mask_mod_semantics.json,
and tests/data/mask_mod_semantics_types.json: enums, type(), isinstance, try/except by type,
annotations; tests/data/mask_mod_semantics_random.json: seeded `random` and torch generators),
each run by torch's create_mask and by `hasseflow convert FILE --n 8 --to text`
(mask_mod_oracle.py): views that alias their base, statements the reader skips, try/except
ImportError, keyword arguments, Python values as CPython has them, messages that tell the truth.

Each case says what it must end as: "rows" (torch's mask, which the reader must give cell for cell;
the rows recorded in the file must be torch's too, so crates/core/tests/mask_mod_semantics.rs can
check the same cases in process) or "refused", a pattern the one-line refusal must match (with a
place in the text). A case never passes by the reader giving a different mask.

Usage: test_mask_mod_semantics.py [BIN]
"""

import json
import os
import re
import tempfile

from mask_mod_oracle import compare, located, torch_side
from tally import Tally, exit_with

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
# The reproducers, and the cases of classes, types, exceptions and annotations.
CASES = [os.path.join(DATA, "mask_mod_semantics.json"), os.path.join(DATA, "mask_mod_semantics_types.json"),
         os.path.join(DATA, "mask_mod_semantics_random.json")]


def run():
    t = Tally()
    cases = []
    for path in CASES:
        with open(path) as f:
            cases += json.load(f)
    t.check(len(cases) >= 55, f"only {len(cases)} cases")
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(cases):
            name, source = case["name"], case["text"]
            path = os.path.join(tmp, f"case_{i}.py")
            with open(path, "w", newline="") as f:
                f.write(source)
            outcome, detail, torch_error, our_error = compare(path, 8)
            if "rows" in case:
                theirs, _ = torch_side(path, 8)
                rows = None if theirs is None else ["".join("1" if x else "." for x in r) for r in theirs]
                t.check(rows == case["rows"], f"{name}: the recorded rows are not torch's ({rows})")
                t.check(outcome == "equal", f"{name}: {outcome}: {detail} {torch_error or ''}")
            else:
                ok = outcome in ("refused", "refused-both") and re.search(case["refused"], our_error or "") is not None
                t.check(ok and case["words"] in (our_error or ""), f"{name}: {outcome}: {detail}")
                t.check(located(our_error or "", source), f"{name}: the refusal names no place in the text")
    return t


if __name__ == "__main__":
    exit_with(run())
