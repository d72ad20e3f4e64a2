#!/usr/bin/env python3
"""Issue 30's semantic reproducers for the mask_mod reader, each run by torch's create_mask and by
`hasseflow convert FILE --n N --to text` (mask_mod_oracle.py): views that alias their base,
statements the reader skips, try/except ImportError, keyword arguments, Python values as CPython
has them, and messages that tell the truth.

Each case says what it must end as: "equal" (the reader's mask is torch's, cell for cell) or
"refused" with a pattern the one-line refusal must match (and a place in the text). A case never
passes by the reader giving a different mask.

Usage: test_mask_mod_semantics.py [BIN]
"""

import os
import re
import tempfile

from mask_mod_oracle import compare, located
from tally import Tally, exit_with

HEAD = "import torch\nN = 8\n"

CASES = [
    # ---- 1. views alias their base; in-place methods write through
    ("packed documents by fill_ on slices", "equal", HEAD + """
DOC = torch.zeros(N, dtype=torch.long)
for i, (s, e) in enumerate([(0, 3), (3, 5), (5, 8)]):
    DOC[s:e].fill_(i)
def mask_mod(b, h, q, k):
    return DOC[q] == DOC[k]
"""),
    ("a tail view updated by +=", "equal", HEAD + """
DOC = torch.zeros(N, dtype=torch.long)
tail = DOC[4:]
tail += 1
def mask_mod(b, h, q, k):
    return DOC[q] == DOC[k]
"""),
    ("item assignment through .view()", "equal", HEAD + """
DOC = torch.zeros(N, dtype=torch.long)
DOC.view(2, 4)[1] = 1
def mask_mod(b, h, q, k):
    return (DOC[q] == DOC[k]) & (k <= q)
"""),
    ("a write to the base is seen by an earlier view", "equal", HEAD + """
DOC = torch.zeros(N, dtype=torch.long)
head = DOC[:4]
DOC[2] = 7
OK = int(head[2])
def mask_mod(b, h, q, k):
    return (q - k).abs() <= OK % 3
"""),
    ("item assignment on a view of a view", "equal", HEAD + """
DOC = torch.arange(N)
v = DOC[2:][1:]
v[0] = 0
def mask_mod(b, h, q, k):
    return DOC[k] <= q
"""),
    ("rows of a 2-d table written while iterating", "equal", HEAD + """
T = torch.zeros(2, N, dtype=torch.long)
for r, row in enumerate(T):
    row[r * 3:] = r + 1
def mask_mod(b, h, q, k):
    return T[0, k] >= T[1, q]
"""),
    ("zero_ and masked_fill_ on views", "equal", HEAD + """
DOC = torch.ones(N, dtype=torch.long)
DOC[:2].zero_()
DOC[5:].masked_fill_(torch.tensor([True, False, True]), 3)
def mask_mod(b, h, q, k):
    return DOC[q] == DOC[k]
"""),
    ("detach, long() and cpu() return what torch returns", "equal", HEAD + """
DOC = torch.zeros(N, dtype=torch.long)
DOC.detach()[1] = 2
DOC.long()[2] = 2
DOC.cpu()[3] = 3
x = DOC.float()
x[4] = 9
def mask_mod(b, h, q, k):
    return DOC[q] >= DOC[k]
"""),
    ("a transposed view written", "equal", HEAD + """
M = torch.zeros(2, N, dtype=torch.long)
M.t()[3] = 1
def mask_mod(b, h, q, k):
    return M[0, q] == M[1, k]
"""),
    ("in-place add of a float to an int tensor is torch's RuntimeError", "refused", r"can't be cast", HEAD + """
DOC = torch.zeros(N, dtype=torch.long)
DOC += 0.5
def mask_mod(b, h, q, k):
    return DOC[q] == DOC[k]
"""),
    # ---- 2. a skipped statement taints what it could mutate
    ("copy_ is not modelled: a later read is refused with both places", "refused",
     r"line 7, column 12: .*changed by the skipped statement at line 5, column 1", HEAD + """
DOC = torch.zeros(N, dtype=torch.long)
DOC.copy_(torch.arange(N) // 3)
def mask_mod(b, h, q, k):
    return DOC[q] == DOC[k]
"""),
    ("a view written by an unmodelled in-place method", "refused", r"line 8, column 12: .*changed by the skipped statement at line 6", HEAD + """
DOC = torch.zeros(N, dtype=torch.long)
tail = DOC[4:]
tail.add_(1)
def mask_mod(b, h, q, k):
    return DOC[q] == DOC[k]
"""),
    ("a global written by a called function in a skipped statement", "refused", r"`W`.*line 9, column 1", HEAD + """
import math
W = 1
def setup():
    global W
    W = 3
    torch.nonexistent_function_for_the_test()
setup()
def mask_mod(b, h, q, k):
    return (q - k).abs() <= W
"""),
    ("del of a list item is modelled", "equal", HEAD + """
L = [3, 1, 2, 5]
del L[1]
del L[-1:]
def mask_mod(b, h, q, k):
    return (q - k).abs() <= len(L) + L[0] - 4
"""),
    ("a name bound by a skipped statement is reported with both places", "refused",
     r"line 6, column 29: .*`X`, set by the skipped statement at line 4, column 1", HEAD + """
X = torch.nonexistent_function_for_the_test(3)
def mask_mod(b, h, q, k):
    return (q - k).abs() <= X
"""),
    # ---- 3. try / except ImportError
    ("HAS_FLASH: an import only the environment decides", "refused",
     r"whether `import flash_attn_not_installed` succeeds depends", HEAD + """
try:
    import flash_attn_not_installed
    WINDOW = 2
except ImportError:
    WINDOW = 4
def mask_mod(b, h, q, k):
    return (q - k).abs() <= WINDOW
"""),
    ("a try on an importable module runs its body", "equal", HEAD + """
try:
    import math
    WINDOW = 2
except ImportError:
    WINDOW = 4
def mask_mod(b, h, q, k):
    return (q - k).abs() <= WINDOW
"""),
    ("an exception raised in a try body is not guessed", "refused", r"which `except` clause handles it is not modelled",
     HEAD + """
D = {"a": 1}
try:
    W = D["b"]
except KeyError:
    W = 3
def mask_mod(b, h, q, k):
    return (q - k).abs() <= W
"""),
    # ---- 4. keyword arguments
    ("round(decimals=) is not ignored", "refused", r"`decimals=`", HEAD + """
S = torch.round(torch.tensor([0.26, 0.74]) * 4, decimals=1)
def mask_mod(b, h, q, k):
    return (q - k).abs() <= S[0].long()
"""),
    ("flatten(1) keeps the first dimension", "equal", HEAD + """
T = torch.arange(2 * N).view(2, 2, 4).flatten(1)
def mask_mod(b, h, q, k):
    return T[1, k] - N <= q
"""),
    ("sum(dtype=) casts first", "equal", HEAD + """
S = torch.tensor([100, 100, 60], dtype=torch.int8).sum(dtype=torch.int8)
def mask_mod(b, h, q, k):
    return (q - k) <= S % 5
"""),
    ("searchsorted(out_int32=True)", "equal", HEAD + """
BOUNDS = torch.tensor([0, 3, 5, 8])
def mask_mod(b, h, q, k):
    return torch.searchsorted(BOUNDS, q, right=True, out_int32=True) == torch.searchsorted(BOUNDS, k, right=True)
"""),
    (".to(other tensor) takes its dtype", "equal", HEAD + """
F = torch.tensor([0.5])
DOC = (torch.arange(N) // 3).to(F) / 2
def mask_mod(b, h, q, k):
    return DOC[q] == DOC[k]
"""),
    ("set_default_dtype(float64) is refused", "refused", r"set_default_dtype", HEAD + """
torch.set_default_dtype(torch.float64)
W = int(torch.tensor([0.1])[0] + 0.2 == 0.30000000000000004) * 2
def mask_mod(b, h, q, k):
    return (q - k).abs() <= W
"""),
    ("an unknown keyword is refused by name", "refused", r"`layout=`", HEAD + """
DOC = torch.zeros(N, dtype=torch.long, layout=torch.strided)
def mask_mod(b, h, q, k):
    return DOC[q] == DOC[k]
"""),
    # ---- 5. Python values
    ("string escapes", "equal", HEAD + """
S = '\\x41\\u0042\\103\\t'
W = len(S) if S[:3] == 'ABC' else 0
def mask_mod(b, h, q, k):
    return (q - k).abs() <= W
"""),
    # ---- 8. a lone-CR file whose first line is a comment
    ("lone CR line endings after a comment", "equal",
     "# a mask written on an old Mac\rimport torch\rN = 8\rdef mask_mod(b, h, q, k):\r    return q >= k\r"),
]


def run():
    t = Tally()
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(CASES):
            name, want = case[0], case[1]
            pattern = case[2] if want == "refused" else None
            source = case[-1]
            path = os.path.join(tmp, f"case_{i}.py")
            with open(path, "w", newline="") as f:
                f.write(source)
            outcome, detail, torch_error, our_error = compare(path, 8)
            if want == "equal":
                t.check(outcome == "equal", f"{name}: {outcome}: {detail} {torch_error or ''}")
            else:
                ok = outcome in ("refused", "refused-both") and re.search(pattern, our_error or "") is not None
                t.check(ok and located(our_error, source), f"{name}: {outcome}: {detail}")
    return t


if __name__ == "__main__":
    exit_with(run())
