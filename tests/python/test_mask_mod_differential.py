#!/usr/bin/env python3
"""A differential fuzz of the mask_mod reader against torch: generated modules, then mutated, each
run by torch's create_mask (mask_mod_oracle.py: the file imported as a module) and by
`hasseflow convert FILE --n N --to text`.

The modules aim where a reader can be silently wrong: views that share memory with their base and
in-place writes through either side (slices filled, `+=` on a tail, rows written while iterating,
`.view(...)[i] = v`, `.t()`, `.detach()`, casts to the same dtype); statements the reader cannot
run that may mutate what the mask reads later (`add_`, `copy_`, `clamp_`, `list.sort()`, a
function writing a `global`); `try`/`except` paths (an import that may be missing, a KeyError,
`else` and `finally`, clauses matched by type: tuples, bases, the text's exception classes, a bare
`raise`); enums and type checks; float and NaN edge cases (division by zero, float-to-long out of range, NaN
compares, float32 rounding, ties to even); integer widths (int8/int16/int32/uint8 wrapping, shifts);
set and dict order; string escapes; Python number semantics (int/float compares past 2**53,
`pow(a, b, m)`, `round(x, -n)`, `int(s, base)`, `__doc__`); `torch.empty` buffers written in part or
in whole (slices, views, `copy_`, `fill_`, `masked_fill_`, index lists) before the mask reads them;
transposed and permuted views written through, and viewed or reshaped where torch's strides decide
between a view, a copy and an error.
Each generated module is then mutated
at random: a statement dropped, duplicated or moved, a constant changed, or an unmodelled in-place
call inserted after a line.

The only thing a module may not do is come out different: every module the reader accepts must
equal create_mask cell for cell ("WRONG" and "accepted-only", a mask where torch raised, fail).
Refusals are allowed; the figures are printed. A module that makes an empty tensor runs under torch
three times, its uninitialised memory filled with random values, zeros and ones: where the three
masks (or errors) differ, the mask reads memory torch never wrote, and the reader must refuse it ("accepted-garbage"
fails).

Usage: test_mask_mod_differential.py [BIN] [--count N] [--seed S] [--keep DIR]
The suite runs a fixed sample (1,000 modules of seed 3030); HASSEFLOW_DIFF_FULL=1 runs 10,000.
"""

import os
import random
import re
import shutil
import sys
import tempfile

COUNT = 10_000 if os.environ.get("HASSEFLOW_DIFF_FULL") else 1_000
SEED = 3030
KEEP = None
for flag in ("--count", "--seed", "--keep"):
    if flag in sys.argv:
        i = sys.argv.index(flag)
        value = sys.argv[i + 1]
        del sys.argv[i:i + 2]
        if flag == "--count":
            COUNT = int(value)
        elif flag == "--seed":
            SEED = int(value)
        else:
            KEEP = value

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch.nn.attention.flex_attention import create_mask  # noqa: E402

from mask_mod_oracle import broadcast_mask, describe_diff, error_line, hasseflow_side, load_module  # noqa: E402
from tally import Tally, exit_with  # noqa: E402

# create_mask (four nested vmaps) costs about 0.3 s a call here, so it runs on every tenth module;
# the others evaluate the same function once on broadcast index tensors, which for the generated
# masks (elementwise operators, comparisons and table lookups only) is the same computation, and
# every module that runs both must agree on both.
CREATE_MASK_EVERY = 10


# torch.empty's memory, filled at random (seeded per run) so that a read of it shows.
_EMPTY_SEED = [0]
_real_empty, _real_empty_like, _real_new_empty = torch.empty, torch.empty_like, torch.Tensor.new_empty


def _garbage(t):
    """Fill 0: random values; fill 1: zeros; fill 2: ones (so that garbage equal to itself shows)."""
    _EMPTY_SEED[0] += 1
    g = torch.Generator().manual_seed(_EMPTY_SEED[0])
    if _EMPTY_SEED[0] > 1000:
        t.fill_(_EMPTY_SEED[0] // 1000 - 1)
    elif t.dtype == torch.bool:
        t.copy_(torch.randint(0, 2, t.shape, generator=g).bool())
    elif t.is_floating_point():
        t.copy_(torch.randn(t.shape, generator=g, dtype=torch.float64) * 100)
    else:
        t.copy_(torch.randint(-100, 100, t.shape, generator=g).to(t.dtype))
    return t


torch.empty = lambda *a, **k: _garbage(_real_empty(*a, **k))
torch.empty_like = lambda *a, **k: _garbage(_real_empty_like(*a, **k))
torch.Tensor.new_empty = lambda self, *a, **k: _garbage(_real_new_empty(self, *a, **k))
FILLS = 3


def torch_side(path, n, with_create_mask):
    """(mask, None) or (None, why torch refused), or ("garbage", why) when the module reads memory
    an empty tensor left unwritten (its masks or errors differ between random fills)."""
    if "empty" not in open(path).read():
        return torch_run(path, n, with_create_mask)
    runs = []
    for fill in range(FILLS):
        _EMPTY_SEED[0] = 1000 * fill
        runs.append(torch_run(path, n, with_create_mask and fill == 0))
    (m0, e0) = runs[0]
    for m, e in runs[1:]:
        if (m is None) != (m0 is None) or (m is not None and not np.array_equal(m, m0)) or (m is None and e != e0):
            return "garbage", f"torch's results differ between fills of empty memory ({e0 or 'a mask'} / {e or 'a mask'})"
    return runs[0]


def torch_run(path, n, with_create_mask):
    try:
        fn = load_module(path).mask_mod
        m, why = broadcast_mask(fn, n)
        if m is None:
            return None, why
        if with_create_mask:
            full = create_mask(fn, B=1, H=1, Q_LEN=n, KV_LEN=n, device="cpu")[0, 0].numpy()
            if not np.array_equal(full, m):
                raise AssertionError("the broadcast evaluation differs from create_mask: " + describe_diff(m, full))
        return m, None
    except AssertionError:
        raise
    except Exception as e:  # noqa: BLE001 - torch refusing the module is an outcome we compare
        return None, error_line(e)


def compare(path, n, with_create_mask):
    theirs, torch_error = torch_side(path, n, with_create_mask)
    ours, our_error = hasseflow_side(path, n)
    if isinstance(theirs, str):
        if ours is not None:
            return "accepted-garbage", f"hasseflow gave a mask; {torch_error}"
        return "refused-garbage", our_error
    if theirs is not None and ours is not None:
        if np.array_equal(ours, theirs):
            return "equal", ""
        return "WRONG", describe_diff(ours, theirs)
    if theirs is not None:
        return "refused", our_error
    if ours is not None:
        return "accepted-only", f"hasseflow gave a mask; torch raised {torch_error}"
    return "refused-both", our_error

DTYPES_INT = ["torch.int8", "torch.int16", "torch.int32", "torch.int64", "torch.uint8", "torch.long"]
DTYPES_FLOAT = ["torch.float32", "torch.float64", "torch.float"]
# String literals with escapes, as they appear in the module's text.
ESCAPES = ["\\x41\\x42", "\\101", "\\t\\n", "ab\\u00e9", "\\0", "\\x7f\\x00", "\\1234", "\\N{BULLET}", "\\a\\v"]
DISTURBANCES = [
    "{t}.add_(1)", "{t}.mul_(2)", "{t}.sub_({c})", "{t}.clamp_(0, {c})", "{t}.copy_({t}.flip(0))",
    "{t}[::2].add_({c})", "{t}[{c}:].mul_(0)", "{t}.index_fill_(0, torch.tensor([{c}]), 0)",
    "{l}.sort()", "{l}.reverse()", "{l}.pop()", "{l}.insert(0, {c})", "{l}.remove({l}[0])",
    "{t}.neg_()", "{t}.abs_()", "{t}.div_(2, rounding_mode='floor')", "{t}.fill_diagonal_(0) if {t}.dim() == 2 else None",
    "{t}.view(-1)[{c}:].index_fill_(0, torch.tensor([0]), 3)", "{t}.view(-1).add_(1)", "{t}.remainder_(3)",
    "{t}.eq_({c})", "{t}.bitwise_xor_({c})", "{t}.clamp_max_({c})", "{t}[1:] += {t}[:-1]", "{t}[1:].add_({t}[:-1])",
    "{t}[:2] = {t}[1:3]", "{t}[[0, 1]] = {t}[{c}]", "{t}[1:] = {t}[1:].flip(0)",
    "_ = [r_.index_fill_(0, torch.tensor([0]), 3) for r_ in {t}.view(-1, 1)[{c}:]]",
    "list(map(lambda r_: r_.index_fill_(0, torch.tensor([0]), 3), {t}.view(-1, 1)[:{c}]))",
    "{t}.view(-1)[{c}:].index_copy_(0, torch.tensor([0]), torch.tensor([3], dtype={t}.dtype))",
    "{t}.scatter_(0, torch.tensor([{c}]).clamp(max={t}.numel() - 1).view([1] * {t}.dim()), 2)",
    "{t}.view(-1)[{c}:].put_(torch.tensor([0]), torch.tensor([3], dtype={t}.dtype))",
    "_ = [r_.put_(torch.tensor([0]), torch.tensor([3], dtype=r_.dtype)) for r_ in {t}.view(-1, 1)[{c}:]]",
]


class Gen:
    def __init__(self, r):
        self.r = r
        self.n = r.randrange(5, 12)
        self.lines = ["import torch", "import math", f"N = {self.n}"]
        self.tables = []  # names of 1-d integer tables of length N
        self.other_tables = []  # names of 1-d bool and float tables of length N (the mask reads them)
        self.lists = []  # names of Python int lists
        self.ints = []  # names of small Python ints
        self.k = 0

    def fresh(self, base):
        self.k += 1
        return f"{base}{self.k}"

    def c(self, lo=0, hi=None):
        return self.r.randrange(lo, (hi if hi is not None else self.n) + 1)

    def add(self, *lines):
        self.lines.extend(lines)

    # ---- views and in-place writes
    def views(self):
        r, n = self.r, self.n
        t = self.fresh("DOC")
        dt = r.choice(["torch.long", "torch.int32", "torch.int64"])
        self.add(f"{t} = torch.zeros(N, dtype={dt})")
        kind = r.randrange(12)
        if kind == 0:
            cuts = sorted(r.sample(range(1, n), r.randrange(1, min(4, n - 1) + 1)))
            spans = list(zip([0] + cuts, cuts + [n]))
            self.add(f"for i, (s, e) in enumerate({spans}):", f"    {t}[s:e].fill_(i + {self.c(0, 2)})")
        elif kind == 1:
            v = self.fresh("tail")
            self.add(f"{v} = {t}[{self.c(0, n - 1)}:]", f"{v} += {self.c(1, 3)}")
        elif kind == 2 and n % 2 == 0:
            self.add(f"{t}.view(2, {n // 2})[{self.c(0, 1)}] = {self.c(1, 3)}")
        elif kind == 3:
            m = self.fresh("M")
            self.add(f"{m} = torch.zeros(2, N, dtype={dt})", f"for j, row in enumerate({m}):",
                     f"    row[j * {self.c(1, 3)}:] = j + 1", f"{t} += {m}[0] + {m}[1]")
        elif kind == 4:
            self.add(f"{t}.detach()[{self.c(0, n - 1)}] = 2", f"{t}.long()[{self.c(0, n - 1)}] = 3",
                     f"{t}.cpu()[{self.c(0, n - 1)}] += 1")
        elif kind == 5:
            m = self.fresh("M")
            self.add(f"{m} = torch.zeros(2, N, dtype={dt})", f"{m}.t()[{self.c(0, n - 1)}] = 1",
                     f"{t}[:] = {m}[0] * 2 + {m}[1]")
        elif kind == 6:
            a = self.c(0, n - 2)
            self.add(f"{t}[{self.c(0, n - 1)}:].zero_()", f"{t}[:{self.c(1, n)}].fill_({self.c(1, 3)})",
                     f"{t}[{a}:].masked_fill_({t}[{a}:] > 0, 5)")
        elif kind == 7:
            v = self.fresh("v")
            self.add(f"{v} = {t}[{self.c(0, 2)}:][{self.c(0, 2)}:]", f"{v}[0] = 4", f"{v} += 1")
        elif kind == 8:
            v = self.fresh("u")
            self.add(f"{v} = {t}.unsqueeze(0)", f"{v}[0, {self.c(0, n - 1)}] = 6",
                     f"{t}[{self.c(0, n - 1)}] -= 1")
        elif kind == 9:
            v = self.fresh("h")
            w = self.fresh("W")
            self.add(f"{v} = {t}[:{self.c(1, n)}]", f"{t}[{self.c(0, n - 1)}] = 7", f"{w} = int({v}.sum()) % 4")
            self.ints.append(w)
        elif kind == 10:
            v = self.fresh("f")
            self.add(f"{v} = {t}.float()", f"{v}[{self.c(0, n - 1)}] = 9", f"{t}.to(torch.float)[0] = 1",
                     f"{t}.to({t}.dtype)[{self.c(0, n - 1)}] = 2")
        else:
            self.add(f"{t}[{self.c(0, n - 1)}] += {self.c(0, 4)}", f"x_ = {t}[{self.c(0, n - 1)}]", "x_ += 3",
                     f"{t}[N - 1] = x_")
        self.tables.append(t)

    # ---- in-place calls, modelled or not (then skipped, and what they write tainted), on what the
    # mask reads or not; writes from an overlapping view of the same tensor
    def disturb(self):
        r = self.r
        if not self.tables and not self.lists:
            return
        t = r.choice(self.tables) if self.tables else None
        lst = r.choice(self.lists) if self.lists else None
        choices = [d for d in DISTURBANCES if ("{t}" in d and t) or ("{l}" in d and lst)]
        self.add(r.choice(choices).format(t=t, l=lst, c=self.c(0, 3)))

    def global_writer(self):
        g = self.fresh("G")
        self.add(f"{g} = {self.c(0, 3)}", "def bump():", f"    global {g}", f"    {g} = {g} + {self.c(1, 3)}",
                 "    return torch.zeros(2).add_(1)", "bump()")
        self.ints.append(g)

    # ---- try / except
    def try_paths(self):
        r = self.r
        w = self.fresh("WIN")
        kind = r.randrange(9)
        if kind == 0:
            mod = r.choice(["flash_attn_missing_pkg", "math", "itertools", "not_a_real_module_x"])
            self.add("try:", f"    import {mod}", f"    {w} = {self.c(0, 2)}", "except ImportError:",
                     f"    {w} = {self.c(2, 4)}")
        elif kind == 1:
            self.add("D_ = {'a': 1, 'b': 2}", "try:", f"    {w} = D_[{r.choice(['a', 'c'])!r}] + 1",
                     "except KeyError:", f"    {w} = {self.c(0, 3)}")
        elif kind == 2:
            self.add("try:", f"    {w} = {self.c(0, 3)}", "except Exception:", f"    {w} = 0", "else:",
                     f"    {w} += 1", "finally:", f"    {w} = {w} % 4")
        elif kind == 3:
            self.add("try:", f"    {w} = [1, 2, 3][{self.c(0, 4)}]", "except IndexError:", f"    {w} = 0")
        elif kind == 4:
            self.add("try:", "    from torch.nn.attention.flex_attention import create_mask", f"    {w} = 2",
                     "except ImportError:", f"    {w} = 3")
        elif kind == 5:
            handler = r.choice(["(KeyError, IndexError) as e_", "LookupError", "(TypeError, ValueError)", ""])
            self.add("try:", f"    {w} = [{self.c(0, 3)}, {self.c(0, 3)}][{self.c(0, 3)}]", f"except {handler}:",
                     f"    {w} = {self.c(0, 3)}", "else:", f"    {w} += 1")
        elif kind == 6:
            e, f = self.fresh("Err"), self.fresh("check")
            caught = r.choice(["ValueError", e, "Exception", "LookupError", f"(KeyError, {e})"])
            self.add(f"class {e}(ValueError):", "    pass", f"def {f}(x):", f"    if x > {self.c(0, 3)}:",
                     f"        raise {e}('too wide')", "    return x", "try:", f"    {w} = {f}({self.c(0, 4)})",
                     f"except {caught}:", f"    {w} = {self.c(0, 3)}")
        elif kind == 7:
            self.add("try:", "    try:", f"        {w} = {self.c(1, 3)} // {self.c(0, 1)}",
                     f"    except {r.choice(['ZeroDivisionError', 'KeyError'])}:", "        raise",
                     f"except {r.choice(['ArithmeticError', 'ZeroDivisionError', 'Exception'])}:",
                     f"    {w} = {self.c(0, 3)}")
        else:
            lst = self.fresh("LOG")
            self.add(f"{lst} = []", "try:", f"    {w} = int({r.choice(['3', 'x', '0x1', '12'])!r})",
                     "except ValueError:", f"    {w} = {self.c(0, 3)}", "finally:", f"    {lst}.append(1)",
                     f"{w} = {w} % 4 + len({lst})")
        self.ints.append(w)

    # ---- enums and type checks
    def enums(self):
        r = self.r
        k, w = self.fresh("Kind"), self.fresh("EW")
        base = r.choice(["Enum", "IntEnum"])
        values = [self.c(0, 3) for _ in range(3)]
        self.add("from enum import Enum, IntEnum", f"class {k}({base}):",
                 *[f"    {name} = {v}" for name, v in zip(["A", "B", "C"], values)])
        expr = r.choice([f"{k}.B.value + len({k})", f"{k}({values[2]}).value", f"len([m for m in {k}])",
                         f"int({k}.A is {k}.C) + int({k}['B'] == {k}.B)", f"{k}.A.value * isinstance({k}.B, int)",
                         f"{k}.A + {k}.C" if base == "IntEnum" else f"int(type({k}.A) is {k})"])
        self.add(f"{w} = ({expr}) % 4")
        self.ints.append(w)

    # ---- floats, NaN, widths
    def floats(self):
        r = self.r
        t = self.fresh("FT")
        kind = r.randrange(8)
        if kind == 0:
            self.add(f"{t} = (torch.arange(N, dtype={r.choice(DTYPES_FLOAT)}) / {r.choice(['0', '2', '3', '0.5'])})")
            self.add(f"{t} = torch.where({t} != {t}, torch.zeros_like({t}), {t}).clamp(max=100).long()")
        elif kind == 1:
            self.add(f"{t} = (torch.arange(N) * {r.choice(['1e20', '1e18', '3e9', '-1e30', '2.5'])}).long() % 4")
        elif kind == 2:
            self.add(f"{t} = torch.tensor([float('nan')] * N)", f"{t} = ({t} == {t}).long() + ({t} != {t}).long() * 2")
        elif kind == 3:
            self.add(f"{t} = torch.round(torch.arange(N) * 0.5).long()")
        elif kind == 4:
            self.add(f"{t} = (torch.arange(N) * 0.1 * 3 * 10).long()")
        elif kind == 5:
            dt = r.choice(DTYPES_INT)
            self.add(f"{t} = (torch.arange(N, dtype={dt}) * {r.choice(['100', '37', '1000', '3'])}).long() % 5")
        elif kind == 6:
            dt = r.choice(["torch.int8", "torch.int16", "torch.int32", "torch.uint8"])
            self.add(f"{t} = (torch.arange(N) * {r.choice(['200', '40000', '3000000000', '7'])}).to({dt}).long() % 3")
        else:
            self.add(f"{t} = ((torch.arange(N) << {self.c(0, 3)}) >> 1) % 3")
        self.tables.append(t)

    # ---- type promotion: a table of one dtype with a Python number (in or out of the dtype's
    # range), a 0-d tensor or a table of another dtype, by an operator or a function, then a step
    # that shows the result's dtype (a wrap, an overflow of int16, a fraction)
    def promotions(self):
        r = self.r
        t = self.fresh("PR")
        dts = ["torch.bool"] + DTYPES_INT + DTYPES_FLOAT
        x = f"(torch.arange(N) * {r.choice(['1', '3', '37', '-5'])} - {r.choice(['0', '4', '100'])}).to({r.choice(dts)})"
        y = r.choice([str(r.choice([2, -3, 0, 7, 300, -129])), str(r.choice([1.5, -0.5, 1e10])), "True",
                      f"torch.tensor({r.choice([3, -2, 1])}, dtype={r.choice(dts)})", "torch.tensor(2.5)",
                      f"(torch.arange(N) * {r.choice(['3', '-5'])}).to({r.choice(dts)})"])
        op = r.choice(["+", "-", "*", "/", "//", "%", "&", "|", "<", ">=", "torch.maximum", "torch.true_divide",
                       "torch.div_trunc", "torch.remainder", "torch.where", "**", "torch.pow", "write"])
        if op == "write":
            # A number (or tensor) written into the table's dtype: torch's overflow check or a wrap.
            z = r.choice([f"X_.masked_fill(X_ > 2, {y})", f"X_.clone().fill_({y})", f"X_.new_full((N,), {y})",
                          f"torch.full_like(X_, {y})", f"torch.nn.functional.pad(X_, (1, 0), value={y})[1:]",
                          f"torch.where(X_ > 2, X_, {y})"])
        elif op == "torch.where":
            z = f"torch.where(X_ > 2, X_, {y})"
        elif op == "torch.div_trunc":
            z = f"torch.div(X_, {y}, rounding_mode='trunc')"
        elif op.startswith("torch."):
            z = f"{op}(X_, {y})"
        else:
            z = f"X_ {op} {y}"
        post = r.choice(["Z_", "Z_ * 3", "Z_.double() * 1.5", "(Z_ * 1000).to(torch.int16)", "Z_.to(torch.int8) + 100"])
        self.add(f"X_ = {x}", "try:", f"    Z_ = {z}", "except RuntimeError:", "    Z_ = X_.flip(0)",
                 f"{t} = ({post}).long() % 5")
        self.tables.append(t)

    # ---- Python values
    def pyvals(self):
        r = self.r
        w = self.fresh("PV")
        kind = r.randrange(12)
        exprs = [
            f"len(list({{{', '.join(str(r.randrange(-3, 20)) for _ in range(r.randrange(1, 7)))}}})) % 4",
            f"list({{{', '.join(str(r.randrange(0, 40)) for _ in range(r.randrange(2, 7)))}}})[0] % 4",
            f"sorted({{{', '.join(str(r.randrange(-5, 9)) for _ in range(r.randrange(2, 6)))}}})[-1] % 4",
            "len('" + r.choice(ESCAPES) + "') % 4",
            f"int(2**53 + {self.c(0, 3)} > float(2**53)) + int(2**53 + 1 == 2.0**53)",
            f"pow({self.c(1, 9)}, {self.c(0, 40)}, {r.choice([3, 5, 7, -4])}) % 4",
            f"round({r.randrange(-2000, 2000)}, -{self.c(1, 3)}) % 4",
            f"int('{r.choice(['ff', '0x1f', '101', '7', 'z'])}', {r.choice([16, 0, 2, 36])}) % 4",
            f"round({r.choice(['2.5', '0.125', '1.005', '2.675', '3.5', '-0.5'])}, {self.c(0, 2)}) * 4 // 1 % 4",
            "(0 if __doc__ is None else len(__doc__)) % 4",
            f"list({{'{self.c(0, 5)}': 1, 'b': 2, '{self.c(0, 5)}': 3}}.values())[0] % 4",
            f"[x for x in {{{', '.join(str(r.randrange(0, 12)) for _ in range(r.randrange(2, 5)))}}}][-1] % 4",
        ]
        self.add(f"{w} = int({exprs[kind]})")
        self.ints.append(w)

    # ---- transposed and permuted views, written through, viewed and reshaped by their strides
    def layouts(self):
        r = self.r
        g, p = self.fresh("G"), self.fresh("P")
        self.add(f"{g} = torch.arange(2 * N).view(2, N) % {self.c(2, 5)}")
        self.add(f"{p} = " + r.choice([f"{g}.t()", f"{g}.permute(1, 0)", f"{g}.mT", f"{g}.T", f"torch.transpose({g}, 0, 1)",
                                        f"{g}.unsqueeze(0).permute(2, 0, 1)[:, 0]", f"{g}.transpose(-1, 0)"]))
        for _ in range(r.randrange(1, 3)):
            k = self.c(0, self.n - 1)
            self.add(r.choice([f"{p}[{k}] = {self.c(0, 3)}", f"{p}[:, 0] += 1", f"{p}.view(-1)[0] = 2", f"{p}.view(N, 2)[{k}, 1] = 6",
                               f"{p}.reshape(-1)[{k}] = 5", f"{p}.contiguous()[{k}] = 1", f"{p}.flatten()[0] = 7",
                               f"{p}[::2].view(-1, 2)[0] = 4", f"{p}.t()[1, {k}] = 3", f"{p}.T.reshape(2, N)[0, {k}] = 8"]))
        t = self.fresh("T")
        self.add(f"{t} = {g}[{self.c(0, 1)}]")
        self.tables.append(t)

    # ---- torch.empty, written in part or in whole before the mask reads it
    def empties(self):
        r, n = self.r, self.n
        e = self.fresh("E")
        dt = r.choice(["torch.long", "torch.int32", "torch.int16", "torch.uint8", "torch.bool", "torch.float32"])
        size = n + r.choice([0, 0, 1, 3])
        self.add(f"{e} = " + r.choice([
            f"torch.empty({size}, dtype={dt})", f"torch.empty(({size},), dtype={dt}, device='cpu')",
            f"torch.zeros({size}, dtype={dt}).new_empty({size})", f"torch.empty_like(torch.ones({size}, dtype={dt}))",
            f"torch.empty(2, {size}, dtype={dt})[1]", f"torch.empty({2 * size}, dtype={dt}).view(2, {size})[0]",
        ]))

        def v():
            return r.choice(["True", "False"]) if dt == "torch.bool" else str(r.randrange(0, 5))

        def span():
            a = r.randrange(0, size)
            return a, r.randrange(a + 1, size + 1)

        for _ in range(r.randrange(1, 4)):
            a, b = span()
            w = self.fresh("w")
            self.add(r.choice([
                f"{e}[{a}:{b}] = {v()}", f"{e}[{a}:{b}] = torch.arange({b - a}) % 3", f"{e}.fill_({v()})",
                f"{e}.zero_()", f"{e}[{a}:].copy_(torch.arange({size - a}) // 2)", f"{e}[:{b}].fill_({v()})",
                f"{e}[{a}] = {v()}", f"{e}[torch.tensor({sorted(r.sample(range(size), r.randrange(1, size + 1)))})] = {v()}",
                f"{e}.masked_fill_(torch.arange({size}) < {b}, {v()})", f"{e}.view({size})[{a}:{b}] = {v()}",
                f"{w} = {e}[{a}:{b}]\n{w}.copy_(torch.full(({b - a},), {v()}))",
                f"{e}[{a}:{b}] += 1" if dt != "torch.bool" else f"{e}[{a}:{b}] |= True",
                f"for i in range({a}, {b}):\n    {e}[i] = i % 3",
            ]))
        t = self.fresh("T")
        off = r.randrange(0, size - n + 1)
        self.add(f"{t} = " + r.choice([f"{e}[{off}:{off} + N]", f"{e}[{off}:{off} + N].long()", f"{e}[:N].clone()",
                                        f"{e}.narrow(0, {off}, N)" if r.random() < 0.2 else f"{e}[{off}:][:N]"]))
        (self.other_tables if dt in ("torch.bool", "torch.float32") else self.tables).append(t)

    def pylist(self):
        lst = self.fresh("L")
        self.add(f"{lst} = {[self.r.randrange(0, self.n) for _ in range(self.r.randrange(2, 6))]}")
        self.lists.append(lst)

    # ---- the mask
    def mask(self):
        r = self.r
        terms = ["(k <= q)"]
        for t in self.tables[-2:] + self.other_tables[-1:]:
            terms.append(r.choice([f"({t}[q] == {t}[k])", f"({t}[k] <= {t}[q])", f"({t}[q] >= {t}[k] - 1)"]))
        for w in self.ints[-2:]:
            terms.append(f"((q - k).abs() <= {w})")
        for lst in self.lists[-1:]:
            terms.append(f"(k >= {lst}[0] % N)")
        r.shuffle(terms)
        body = terms[0]
        for x in terms[1:]:
            body = f"{body} {r.choice(['&', '|'])} {x}"
        self.add("", "def mask_mod(b, h, q, k):", f"    return {body}")

    def module(self):
        r = self.r
        if r.random() < 0.2:
            self.lines.insert(0, r.choice(['"""Docs."""', '"""A packed-document mask."""', "# no doc"]))
        steps = [self.views, self.floats, self.pyvals, self.try_paths, self.pylist, self.global_writer, self.enums,
                 self.empties, self.layouts, self.promotions]
        weights = [5, 3, 4, 2, 1, 1, 1, 3, 2, 2]
        for _ in range(r.randrange(1, 4)):
            r.choices(steps, weights)[0]()
        if r.random() < 0.3:
            self.disturb()
        self.mask()
        return self.mutate("\n".join(self.lines) + "\n")

    def mutate(self, text):
        """A random edit of a whole statement (never inside an indented block) or a constant."""
        r = self.r
        if r.random() < 0.5:
            return text
        lines = text.split("\n")
        top = [i for i, line in enumerate(lines) if line and not line.startswith((" ", "def ", "import", "N ="))
               and not lines[i].endswith(":") and not (i + 1 < len(lines) and lines[i + 1].startswith(" "))]
        if not top:
            return text
        i = r.choice(top)
        kind = r.randrange(4)
        if kind == 0:
            del lines[i]
        elif kind == 1:
            lines.insert(i, lines[i])
        elif kind == 2:
            j = r.choice(top)
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines[i] = re.sub(r"\b(\d)\b", lambda m: str((int(m.group(1)) + r.randrange(1, 4)) % 10), lines[i], count=1)
        return "\n".join(lines)


def main():
    r = random.Random(SEED)
    t = Tally()
    figures = {}
    tmp = KEEP or tempfile.mkdtemp(prefix="hasseflow_diff_")
    os.makedirs(tmp, exist_ok=True)
    try:
        for i in range(COUNT):
            g = Gen(random.Random(r.getrandbits(64)))
            text = g.module()
            path = os.path.join(tmp, f"diff_{i:05}.py")
            with open(path, "w") as f:
                f.write(text)
            outcome, detail = compare(path, g.n, i % CREATE_MASK_EVERY == 0)
            figures[outcome] = figures.get(outcome, 0) + 1
            if "empty" in text:
                figures["empty " + outcome] = figures.get("empty " + outcome, 0) + 1
            bad = ("WRONG", "accepted-only", "accepted-garbage")
            t.check(outcome not in bad, f"{path}: {outcome}: {detail}")
            if not KEEP and outcome not in bad:
                os.remove(path)
    finally:
        if not KEEP and t.failed == 0:
            shutil.rmtree(tmp, ignore_errors=True)
    accepted = figures.get("equal", 0) + figures.get("WRONG", 0) + figures.get("accepted-only", 0)
    print(f"{COUNT} modules (seed {SEED}): accepted {accepted}, equal {figures.get('equal', 0)}, "
          f"refused {figures.get('refused', 0)} (torch ran), refused by both {figures.get('refused-both', 0)}, "
          f"WRONG {figures.get('WRONG', 0)}, accepted where torch raised {figures.get('accepted-only', 0)}; "
          f"making an empty tensor: {sum(v for k, v in figures.items() if k.startswith('empty '))} modules, "
          f"{figures.get('empty equal', 0)} equal; reading its unwritten memory: refused "
          f"{figures.get('refused-garbage', 0)}, accepted {figures.get('accepted-garbage', 0)}")
    return t


if __name__ == "__main__":
    exit_with(main())
