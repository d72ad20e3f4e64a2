#!/usr/bin/env python3
"""A seeded property test of the mask_mod reader: 300 random whole modules of the supported subset,
each run by `hasseflow convert FILE --n N --to text` and by torch's create_mask (mask_mod_oracle.py).

The generator writes what training code writes: integer, float and boolean constants (literals,
arithmetic, shifts, conditional expressions, `if` on constants, tuple assignment, a config dict,
math.ceil, min/max on ints), module-level tensors (arange, repeat_interleave of random lengths,
cumsum, zeros/ones/full plus item, slice and loop assignment, tensor([...]), F.pad, derived
bool tensors, per-head and per-batch tables) and lookups into them by q_idx/kv_idx that stay in
range (bare when the table covers n, `% L`, `.clamp(0, L - 1)`, block indices `q // c`, sometimes a
negative index `% L - L`); integer helpers, helpers returning tuples unpacked by the mask,
factories with closures, lambdas returned from functions, functools.partial (keyword and
positional), wrappers taking a mask, and_masks/or_masks, aliases; expressions with + - * / // % of
Python semantics on negatives, & | ^ ~ << >>, comparisons and their methods (.eq, .lt, ...), abs
in its three forms, clamp, minimum/maximum, where, fmod, floor/ceil, logical_and/or/not,
conditional expressions on constants, float literals (1e-5, 0.1, 2.5, ...) and float division;
tables made by the torch tail (roll, argsort, sort, scatter, unique_consecutive, diff, F.pad
modes, gather, index_select, bincount, expand, one_hot, eye, nonzero, topk, masked_select,
count_nonzero); vector values per position (a row of a (start, end) table looked up at a traced
index, then indexed, compared elementwise and reduced with any/all/sum/amax); and BlockMask
objects (create_block_mask of the mask, its .mask_mod read back or the object taken as the mask).
The batch and head arguments are used (arithmetic and per-head/per-batch lookups) in about a
quarter of the programs, run with `--batch B --head H` and create_mask's [b, h].

About 5% of the programs carry a flaw torch cannot run (`and`/`or`/`not` between tensors, a
Python `if` on a tensor, min/max/bool/int of tensors, a chained comparison, a lookup past the end):
both sides must refuse those. Every other program must agree cell for cell with torch or be
refused by both; at least 270 of 300 must agree.

Usage: test_mask_mod_random.py [BIN] [--torch-only] [--keep DIR] [--count N] [--seed S]
(--torch-only: every program is run by torch alone, the valid ones must run and the flawed ones
must fail; --keep DIR: write the programs there; --count and --seed for longer hunts, the suite
runs the default 300 of seed 20260).
"""

import functools
import math
import os
import random
import shutil
import sys
import tempfile

TORCH_ONLY = "--torch-only" in sys.argv
if TORCH_ONLY:
    sys.argv.remove("--torch-only")
KEEP = None
COUNT = 300
SEED = 20260
for flag in ("--keep", "--count", "--seed"):
    if flag in sys.argv:
        i = sys.argv.index(flag)
        value = sys.argv[i + 1]
        del sys.argv[i:i + 2]
        if flag == "--keep":
            KEEP = value
        elif flag == "--count":
            COUNT = int(value)
        else:
            SEED = int(value)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from cases import BIN  # noqa: E402
from mask_mod_oracle import compare, located, torch_side  # noqa: E402
from tally import Tally, exit_with  # noqa: E402

CMP = ["<", "<=", ">", ">=", "==", "!="]
CMP_METHOD = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}
FLOAT_LITERALS = ["0.5", "0.25", "1.5", "2.5", "0.75", "3.0", "0.1", "1e-5", "2.2", "1e3", "0.3", "4.0"]
CONST_NAMES = ["WINDOW", "BLOCK", "CHUNK", "SINKS", "PREFIX", "STRIDE", "DILATION", "LOOKBACK", "GROUP",
               "RADIUS", "SHIFT", "OFFSET", "K"]
FLAWS = ["and", "or", "not", "if", "min", "max", "chain", "oob", "bool", "int"]


class Scope:
    """What an expression may use: the q/kv/b/h parameter names (None where absent), local
    variables by type, Python-int parameters with their values, callable masks."""

    def __init__(self, q=None, kv=None, b=None, h=None):
        self.q, self.kv, self.b, self.h = q, kv, b, h
        self.ints, self.floats, self.bools = [], [], []
        self.pyints = {}
        self.masks = []  # (name, needs_range)
        self.needs_range = False  # uses its q/kv where they must lie in [0, n)


class Gen:
    def __init__(self, r, n, b, h, use_bh):
        self.r, self.n, self.b, self.h, self.use_bh = r, n, b, h, use_bh
        self.ns = {"torch": torch, "F": F, "math": math, "functools": functools}
        self.blocks = []
        self.imports = {"import torch"}
        self.pyints, self.pyfloats, self.flags = {}, {}, {}
        self.tensors = []  # (name, dtype, shape, role) role: "seq" | "head" | "batch"
        self.masks = []  # (name, needs_range)
        self.int_helpers, self.tuple_helpers = [], []
        self.rows, self.vecs = [], []  # vector tables: (name, rows) of (start, end) pairs; 1-d offsets
        self.counter = 0

    # ---- names and constants
    def fresh(self, base):
        self.counter += 1
        return f"{base}_{self.counter}"

    def const_line(self, text):
        exec(text, self.ns)  # noqa: S102 - our own generated constants, for their values
        return text

    def add_consts(self):
        r, lines = self.r, []
        for _ in range(r.randrange(1, 6)):
            name = self.fresh(r.choice(CONST_NAMES))
            kind = r.randrange(11)
            prior = list(self.pyints)
            if kind == 0 and prior:
                text = f"{name} = {r.choice(prior)} * {r.randrange(1, 4)} {r.choice('+-')} {r.randrange(0, 4)}"
            elif kind == 1:
                text = f"{name} = 1 << {r.randrange(0, 5)}"
            elif kind == 2:
                text = f"{name} = {r.randrange(-9, 10)} // {r.choice([2, 3, -2, 4])}"
            elif kind == 3:
                text = f"{name} = {r.randrange(-9, 10)} % {r.choice([3, 4, -3, 5])}"
            elif kind == 4:
                text = f"{name} = int({r.choice(['2.5', '3.9', '0.5', '7.2'])} * {r.randrange(1, 4)})"
            elif kind == 5:
                flag = self.flag(lines)
                text = f"{name} = {r.randrange(1, 9)} if {flag} else {r.randrange(-3, 9)}"
            elif kind == 6:
                flag = self.flag(lines)
                a, c = r.randrange(1, 9), r.randrange(-3, 9)
                text = f"if {flag}:\n    {name} = {a}\nelse:\n    {name} = {c}"
            elif kind == 7:
                other = self.fresh(r.choice(CONST_NAMES))
                text = f"{name}, {other} = {r.randrange(1, 9)}, {r.randrange(-4, 9)}"
                lines.append(self.const_line(text))
                self.pyints[name] = self.ns[name]
                self.pyints[other] = self.ns[other]
                continue
            elif kind == 8:
                cfg = self.fresh("CONFIG")
                lines.append(self.const_line(
                    f'{cfg} = {{"window": {r.randrange(1, 9)}, "lr": 3e-4, "eps": 1e-5, "heads": {r.randrange(1, 9)}}}'))
                text = f'{name} = {cfg}["{r.choice(["window", "heads"])}"]'
            elif kind == 9:
                text = f"{name} = math.ceil({r.randrange(1, 70)} / {r.randrange(1, 9)})"
                self.imports.add("import math")
            else:
                text = f"{name} = {r.choice(['max', 'min'])}({r.randrange(-3, 9)}, {r.randrange(-3, 9)})"
            lines.append(self.const_line(text))
            self.pyints[name] = self.ns[name]
        for _ in range(r.randrange(0, 3)):
            name = self.fresh(r.choice(["SCALE", "RATIO", "EPS", "TAU"]))
            text = r.choice([f"{name} = {r.choice(FLOAT_LITERALS)}", f"{name} = {r.randrange(1, 9)} / {r.randrange(1, 5)}",
                             f"{name} = {r.choice(FLOAT_LITERALS)} * {r.randrange(1, 4)}"])
            lines.append(self.const_line(text))
            self.pyfloats[name] = self.ns[name]
        if r.random() < 0.3:  # floats nobody uses
            lines.append(r.choice(["LR = 3e-4", "DROPOUT = 0.1", "ROPE_THETA = 10000.0", "NORM_EPS = 1e-6"]))
        return "\n".join(lines)

    def flag(self, lines):
        if self.flags and self.r.random() < 0.5:
            return self.r.choice(list(self.flags))
        name = self.fresh(self.r.choice(["CAUSAL", "USE_SINKS", "BIDIRECTIONAL", "SHARED"]))
        lines.append(self.const_line(f"{name} = {self.r.choice(['True', 'False'])}"))
        self.flags[name] = self.ns[name]
        return name

    def any_flag(self):
        if not self.flags:
            lines = []
            name = self.flag(lines)
            self.blocks.append("\n".join(lines))
            return name
        return self.r.choice(list(self.flags))

    # ---- module-level tensors
    def size_text(self, size):
        """The size as a literal or a named constant holding it."""
        named = [k for k, v in self.pyints.items() if v == size]
        return self.r.choice(named) if named and self.r.random() < 0.5 else str(size)

    def lengths(self, total, parts):
        cuts = sorted(self.r.sample(range(1, total), parts - 1)) if parts > 1 else []
        bounds = [0, *cuts, total]
        return [bounds[i + 1] - bounds[i] for i in range(parts)]

    def add_tensor(self):
        r, n = self.r, self.n
        size = r.choice([n, n, n + r.randrange(1, 9), r.randrange(1, 9), max(1, n // 2)])
        name = self.fresh(r.choice(["doc", "table", "ids", "pos", "flags", "seg", "offsets"]))
        st = self.size_text(size)
        kind = r.randrange(16)
        lines = []
        dtype = "int"
        if kind == 0:
            lines.append(f"{name} = torch.arange({st})")
        elif kind == 1:
            lines.append(f"{name} = torch.arange({st}) * {r.randrange(-2, 4)} + {r.randrange(-3, 4)}")
        elif kind == 2:
            parts = r.randrange(1, min(size, 6) + 1)
            lens = self.lengths(size, parts)
            if r.random() < 0.5:
                lname = self.fresh("lengths")
                lines.append(f"{lname} = {lens}")
                lines.append(f"{name} = torch.repeat_interleave(torch.arange(len({lname})), torch.tensor({lname}))")
            else:
                lines.append(f"{name} = torch.repeat_interleave(torch.arange({parts}), torch.tensor({lens}))")
        elif kind == 3:
            vals = [r.randrange(-2, 4) for _ in range(size)]
            lines.append(r.choice([f"{name} = torch.tensor({vals}).cumsum(0)",
                                   f"{name} = torch.cumsum(torch.tensor({vals}), dim=0)"]))
        elif kind == 4:
            lines.append(f"{name} = torch.zeros({st}, dtype=torch.{r.choice(['long', 'int32', 'int64'])})")
            lines += self.assignments(name, size, lambda: str(r.randrange(-4, 9)))
        elif kind == 5:
            lines.append(f"{name} = torch.full(({st},), {r.randrange(-3, 9)})")
            lines += self.assignments(name, size, lambda: str(r.randrange(-4, 9)))
        elif kind == 6:
            vals = [r.randrange(-5, 10) for _ in range(size)]
            dt = r.choice(["", ", dtype=torch.int32", ", dtype=torch.long"])
            lines.append(f"{name} = torch.tensor({vals}{dt})")
        elif kind == 7:
            left = r.randrange(0, size)
            right = r.randrange(0, size - left)
            vals = [r.randrange(0, 9) for _ in range(size - left - right)]
            lines.append(f"{name} = F.pad(torch.tensor({vals}), ({left}, {right}), value={r.randrange(-2, 3)})")
            self.imports.add("import torch.nn.functional as F")
        elif kind == 8:
            toks = [r.randrange(0, 4) for _ in range(size)]
            lines.append(f"{name} = (torch.tensor({toks}) == 0).cumsum(0)")
        elif kind == 9:
            lines.append(f"{name} = torch.ones({st}, dtype=torch.int32) * {r.randrange(-3, 6)}")
        elif kind == 10:
            dtype = "bool"
            lines.append(f"{name} = torch.zeros({st}, dtype=torch.bool)")
            lines += self.assignments(name, size, lambda: "True")
        elif kind == 11:
            dtype = "bool"
            lines.append(f"{name} = torch.ones({st}, dtype=torch.bool)")
            lines += self.assignments(name, size, lambda: "False")
        elif kind == 12:
            dtype = "bool"
            lines.append(r.choice([f"{name} = torch.arange({st}) % {r.randrange(1, 5)} == 0",
                                   f"{name} = torch.tensor({[r.random() < 0.4 for _ in range(size)]})",
                                   f"{name} = torch.arange({st}) < {r.randrange(0, size + 2)}"]))
        elif kind == 13:
            dtype = "float"
            lines.append(r.choice([f"{name} = torch.arange({st}) * {r.choice(FLOAT_LITERALS)}",
                                   f"{name} = torch.arange({st}) / {r.randrange(1, 5)}",
                                   f"{name} = torch.full(({st},), {r.choice(FLOAT_LITERALS)})"]))
        elif kind == 14:
            dtype = "float"
            lines.append(f"{name} = torch.zeros({st})")
            lines += self.assignments(name, size, lambda: r.choice(FLOAT_LITERALS + ["-0.5", "-2.5"]))
        else:
            return self.add_table()
        if r.random() < 0.35:
            lines = self.tail_tensor(name, size)
            dtype = "int"
        self.tensors.append((name, dtype, (size,), "seq"))
        return "\n".join(lines)

    def tail_tensor(self, name, size):
        """A 1-d integer table of `size` made by one of the torch tail functions (roll, argsort,
        sort, scatter, unique_consecutive, diff, F.pad modes, gather, index_select, bincount,
        expand, one_hot, eye, nonzero, topk, masked_select, count_nonzero)."""
        r = self.r
        vals = [r.randrange(-4, 9) for _ in range(size)]
        kind = r.randrange(17)
        if kind == 0:
            return [f"{name} = torch.roll(torch.tensor({vals}), {r.randrange(-5, 6)})"]
        if kind == 1:
            desc = r.choice(["", ", descending=True"])
            if size > 16:  # torch's order of ties is its own above 16 without stable=True
                desc += ", stable=True"
            return [f"{name} = torch.argsort(torch.tensor({vals}){desc})"]
        if kind == 2:
            return [f"{name} = torch.sort(torch.tensor({vals}), descending={r.random() < 0.5})[0]"]
        if kind == 3:
            k = r.randrange(1, size + 1)
            idx = r.sample(range(size), k)
            src = [r.randrange(-3, 7) for _ in range(k)]
            return [f"{name} = torch.zeros({size}, dtype=torch.long).scatter(0, torch.tensor({idx}), torch.tensor({src}))"]
        if kind == 4:
            runs = sorted(r.randrange(0, 4) for _ in range(size))
            return [f"_, {name} = torch.unique_consecutive(torch.tensor({runs}), return_inverse=True)"]
        if kind == 5:
            return [f"{name} = torch.diff(torch.tensor({vals}), prepend=torch.tensor([{r.randrange(-3, 4)}]))"]
        if kind == 6 and size >= 3:
            mode = r.choice(["replicate", "circular", "constant"])
            inner = vals[1:-1]
            self.imports.add("import torch.nn.functional as F")
            return [f"{name} = F.pad(torch.tensor([{inner}]), (1, 1), mode={mode!r})[0]"]
        if kind == 7:
            base = [r.randrange(-4, 9) for _ in range(r.randrange(1, 9))]
            idx = [r.randrange(0, len(base)) for _ in range(size)]
            return [f"{name} = torch.gather(torch.tensor({base}), 0, torch.tensor({idx}))"]
        if kind == 8:
            base = [r.randrange(-4, 9) for _ in range(r.randrange(1, 9))]
            idx = [r.randrange(0, len(base)) for _ in range(size)]
            return [f"{name} = torch.tensor({base}).index_select(0, torch.tensor({idx}))"]
        if kind == 9:
            items = [r.randrange(0, size) for _ in range(r.randrange(1, 12))]
            return [f"{name} = torch.bincount(torch.tensor({items}), minlength={size})[:{size}]"]
        if kind == 10:
            return [f"{name} = torch.tensor({vals}).view(1, -1).expand(3, -1)[{r.randrange(3)}]"]
        if kind == 11:
            k = r.randrange(1, 5)
            cls = [r.randrange(0, k) for _ in range(size)]
            self.imports.add("import torch.nn.functional as F")
            return [f"{name} = F.one_hot(torch.tensor({cls}), {k})[:, {r.randrange(k)}]"]
        if kind == 12:
            return [f"{name} = torch.eye({size}, dtype=torch.long)[{r.randrange(size)}] * {r.randrange(1, 5)}"]
        if kind == 13:
            flags = [True] * size + [False] * r.randrange(0, 6)
            r.shuffle(flags)
            return [f"{name} = torch.nonzero(torch.tensor({flags})).flatten()"]
        if kind == 14:
            distinct = r.sample(range(-200, 200), size + r.randrange(0, 4))
            return [f"{name} = torch.topk(torch.tensor({distinct}), {size}, largest={r.random() < 0.5})[1]"]
        if kind == 15:
            flags = [True] * size + [False] * r.randrange(0, 6)
            r.shuffle(flags)
            base = [r.randrange(-4, 9) for _ in flags]
            return [f"{name} = torch.masked_select(torch.tensor({base}), torch.tensor({flags}))"]
        grid = [[r.randrange(0, 3) for _ in range(3)] for _ in range(size)]
        return [f"{name} = torch.count_nonzero(torch.tensor({grid}), dim=1)"]

    def add_rows(self):
        """A table of (start, end) rows, or a short 1-d table of offsets: read per position as a
        vector (vector values)."""
        r, n = self.r, self.n
        if r.random() < 0.6:
            name = self.fresh("spans")
            m = r.randrange(1, 5)
            rows = []
            for _ in range(m):
                a = r.randrange(-2, n + 2)
                rows.append([a, a + r.randrange(0, n // 2 + 2)])
            self.rows.append((name, m))
            return f"{name} = torch.tensor({rows})"
        name = self.fresh("offs")
        vals = [r.randrange(-4, 9) for _ in range(r.randrange(1, 5))]
        self.vecs.append(name)
        return f"{name} = torch.tensor({vals}{r.choice(['', ', dtype=torch.int32'])})"

    def vector_bool(self, sc):
        """A boolean built from a per-position vector: a row of a table looked up at a traced index
        and indexed, compared elementwise and reduced, or a traced value against a 1-d table."""
        r = self.r
        x = self.it(sc, 1)
        if self.rows and (not self.vecs or r.random() < 0.6):
            name, m = r.choice(self.rows)
            idx = self.index(sc, m, 1)
            row = f"{name}[{idx}]" if r.random() < 0.7 else f"{name}[{idx}, :]"
            form = r.randrange(4)
            if form == 0:
                return f"(({x} >= {row}[0]) & ({x} < {row}[1]))"
            if form == 1:
                return f"({x} {r.choice(CMP)} {row}).{r.choice(['any', 'all'])}()"
            if form == 2:
                return f"(({x} - {row}).sum() {r.choice(CMP)} {r.randrange(-3, 9)})"
            return f"torch.{r.choice(['any', 'all'])}({row} {r.choice(CMP)} {x})"
        name = r.choice(self.vecs)
        form = r.randrange(3)
        if form == 0:
            return f"(({x} - {name}) % {r.randrange(2, 6)} == 0).any()"
        if form == 1:
            return f"(({x} + {name}) {r.choice(CMP)} {self.it(sc, 1)}).all()"
        return f"(({x} * {name}).amax() {r.choice(CMP)} {r.randrange(-3, 20)})"

    def assignments(self, name, size, value):
        r, lines = self.r, []
        for _ in range(r.randrange(1, 4)):
            a = r.randrange(0, size)
            c = r.randrange(a, size + 1)
            form = r.randrange(5)
            if form == 0:
                lines.append(f"{name}[{r.randrange(-size, size)}] = {value()}")
            elif form == 1:
                lines.append(f"{name}[{a}:{c}] = {value()}")
            elif form == 2:
                lines.append(f"{name}[{a}::{r.randrange(1, 4)}] = {value()}")
            elif form == 3:
                lines.append(f"{name}[:{c}] = {value()}")
            else:
                lines.append(f"for i in range({a}, {size}, {r.randrange(1, 5)}):\n    {name}[i] = {value()}")
        return lines

    def add_table(self):
        """A 2-D table: a block table read by q // c and kv // c, or a small one read with % and clamp."""
        r, n = self.r, self.n
        name = self.fresh(r.choice(["blocks", "allowed", "pattern"]))
        c = r.randrange(1, 9)
        rows = cols = -(-n // c) if r.random() < 0.6 else r.randrange(1, 7)
        lines = []
        kind = r.randrange(1, 4)
        if kind == 1:
            lines.append(f"{name} = torch.zeros({rows}, {cols}, dtype=torch.bool)")
            for _ in range(r.randrange(1, 4)):
                i, j = r.randrange(rows), r.randrange(cols)
                lines.append(r.choice([f"{name}[{i}, {j}] = True", f"{name}[{i}:, :{j + 1}] = True",
                                       f"{name}[:, {j}] = True",
                                       f"for i in range({rows}):\n    {name}[i, max(0, i - {r.randrange(0, 3)}):i + 1] = True"]))
            dtype = "bool"
        elif kind == 2:
            vals = [[r.randrange(-3, 6) for _ in range(cols)] for _ in range(rows)]
            lines.append(f"{name} = torch.tensor({vals})")
            dtype = "int"
        else:
            vals = [[r.random() < 0.5 for _ in range(cols)] for _ in range(rows)]
            lines.append(f"{name} = torch.tensor({vals})")
            dtype = "bool"
        self.tensors.append((name, dtype, (rows, cols), f"block{c}"))
        return "\n".join(lines)

    def add_bh_tensor(self):
        r = self.r
        if r.random() < 0.5:
            name = self.fresh(r.choice(["head_window", "head_sinks", "head_offset"]))
            size = self.h + 1 + r.randrange(0, 4)
            self.tensors.append((name, "int", (size,), "head"))
            return f"{name} = torch.tensor({[r.randrange(-2, 12) for _ in range(size)]})"
        name = self.fresh(r.choice(["batch_docs", "batch_pad", "batch_prefix"]))
        rows, cols = self.b + 1 + r.randrange(0, 3), self.n + r.randrange(0, 4)
        if r.random() < 0.5:
            self.tensors.append((name, "int", (rows, cols), "batch"))
            return f"{name} = torch.tensor({[sorted(r.randrange(0, 4) for _ in range(cols)) for _ in range(rows)]})"
        self.tensors.append((name, "bool", (rows, cols), "batch"))
        lines = [f"{name} = torch.ones({rows}, {cols}, dtype=torch.bool)"]
        for i in range(rows):
            if r.random() < 0.6:
                lines.append(f"{name}[{i}, {r.randrange(0, cols)}:] = False")
        return "\n".join(lines)

    # ---- expressions
    def pyint(self, sc, nonzero=False):
        r = self.r
        pool = [(str(v), v) for v in (r.randrange(-4, 9), r.randrange(1, 6))]
        pool += [(k, v) for k, v in self.pyints.items()] + [(k, v) for k, v in sc.pyints.items()]
        if nonzero:
            pool = [p for p in pool if p[1] != 0] or [("3", 3)]
        text, value = r.choice(pool)
        return (f"({text})" if value < 0 and text.lstrip("-").isdigit() else text), value

    def pyfloat(self):
        pool = FLOAT_LITERALS + list(self.pyfloats)
        return self.r.choice(pool)

    def tensors_of(self, dtype, role="seq"):
        return [t for t in self.tensors if t[1] == dtype and (t[3] == role or (role == "seq" and t[3].startswith("block")))]

    def index(self, sc, size, d, block=None):
        r, n = self.r, self.n
        opts = []
        if sc.q is not None:
            if size >= n:
                opts += ["bare", "bare"]
            if block and size >= -(-n // block):
                opts += ["block", "block", "block"]
        opts += ["mod", "clamp", "clamp_kw", "torch_clamp"]
        if r.random() < 0.05:
            opts.append("negative")
        form = r.choice(opts)
        st = self.size_text(size)
        if form == "bare":
            sc.needs_range = True
            return r.choice([sc.q, sc.kv])
        if form == "block":
            sc.needs_range = True
            return f"{r.choice([sc.q, sc.kv])} // {block}"
        e = self.it(sc, d - 1)
        if form == "mod":
            return f"({e}) % {st}"
        if form == "clamp":
            return f"({e}).clamp(0, {size - 1})"
        if form == "clamp_kw":
            return f"({e}).clamp(min=0, max={st} - 1)"
        if form == "torch_clamp":
            return f"torch.clamp({e}, 0, {size - 1})"
        return f"({e}) % {st} - {st}"

    def lookup(self, sc, dtype, d):
        r = self.r
        cands = self.tensors_of(dtype)
        if self.use_bh and sc.h is not None:
            cands += self.tensors_of(dtype, "head") + self.tensors_of(dtype, "batch")
        if not cands:
            return None
        name, _, shape, role = r.choice(cands)
        if role == "head":
            return f"{name}[{sc.h}]"
        if role == "batch":
            return f"{name}[{sc.b}, {self.index(sc, shape[1], d)}]"
        if len(shape) == 1:
            return f"{name}[{self.index(sc, shape[0], d)}]"
        block = int(role[5:])
        return f"{name}[{self.index(sc, shape[0], d, block)}, {self.index(sc, shape[1], d, block)}]"

    def it_leaf(self, sc, d):
        r = self.r
        opts = ["q", "kv", "q", "kv"] if sc.q is not None else []
        opts += ["local"] * (2 * len(sc.ints))
        if d >= -1:
            opts += ["lookup", "lookup"]
            if self.int_helpers:
                opts.append("helper")
        if self.use_bh and sc.h is not None:
            opts += ["bh"]
        while opts:
            k = r.choice(opts)
            if k == "q":
                return sc.q
            if k == "kv":
                return sc.kv
            if k == "local":
                return r.choice(sc.ints)
            if k == "bh":
                return r.choice([sc.b, sc.h])
            if k == "helper":
                return f"{r.choice(self.int_helpers)}({self.it(sc, min(d, 1) - 1)})"
            got = self.lookup(sc, "int", min(d, 1))
            if got:
                return got
            opts = [o for o in opts if o != "lookup"]
        return sc.q or sc.ints[0]  # unreachable: a mask has q, a helper its parameters

    def it(self, sc, d):
        r = self.r
        if d <= 0 or r.random() < 0.3:
            return self.it_leaf(sc, d)
        k = r.randrange(22)
        a = self.it(sc, d - 1)
        if k <= 3:
            other = self.it(sc, d - 1) if r.random() < 0.6 else self.pyint(sc)[0]
            return f"({a} {r.choice('+-')} {other})"
        if k == 4:
            return f"({a} * {self.pyint(sc)[0] if r.random() < 0.7 else r.randrange(0, 4)})"
        if k in (5, 6, 7, 8):
            op = r.choice(["//", "%"])
            if r.random() < 0.8:
                return f"({a} {op} {self.pyint(sc, nonzero=True)[0]})"
            return f"({a} {op} ({self.abs_form(self.it(sc, d - 1))} + 1))"
        if k == 9:
            return f"(-{a})"
        if k == 10:
            return f"(~{a})" if r.random() < 0.3 else f"({a} {r.choice('&|^')} {self.it(sc, d - 1) if r.random() < 0.5 else self.pyint(sc)[0]})"
        if k == 11:
            return f"({a} {r.choice(['<<', '>>'])} {r.randrange(0, 4)})"
        if k == 12:
            return self.abs_form(a)
        if k == 13:
            lo, hi = sorted([self.pyint(sc)[1], self.pyint(sc)[1]])
            return r.choice([f"({a}).clamp({lo}, {hi})", f"({a}).clamp(min={lo})", f"({a}).clamp(max={hi})",
                             f"torch.clamp({a}, min={lo}, max={hi})", f"torch.clamp({a}, {lo})"])
        if k == 14:
            return f"torch.{r.choice(['minimum', 'maximum'])}({a}, {self.it(sc, d - 1)})"
        if k == 15:
            other = self.it(sc, d - 1) if r.random() < 0.6 else self.pyint(sc)[0]
            first, second = (a, other) if r.random() < 0.5 else (other, a)
            return f"torch.where({self.bt(sc, d - 1)}, {first}, {second})"
        if k == 16:
            return f"torch.fmod({a}, {self.pyint(sc, nonzero=True)[0]})"
        if k == 17:
            return f"({a} if {self.any_flag()} else {self.it(sc, d - 1)})"
        if k == 18:
            got = self.lookup(sc, "int", d)
            return got or a
        if k == 19 and self.int_helpers:
            return f"{r.choice(self.int_helpers)}({a})"
        if k == 20:
            return f"torch.remainder({a}, {self.pyint(sc, nonzero=True)[0]})"
        return a

    def abs_form(self, e):
        return self.r.choice([f"abs({e})", f"({e}).abs()", f"torch.abs({e})"])

    def ft(self, sc, d):
        r = self.r
        if d <= 0 or r.random() < 0.25:
            opts = ["div", "mul", "add"] + ["local"] * len(sc.floats)
            k = r.choice(opts + (["lookup"] if self.tensors_of("float") else []))
            if k == "local":
                return r.choice(sc.floats)
            if k == "lookup":
                return self.lookup(sc, "float", max(d, 1))
            a = self.it(sc, 1)
            if k == "div":
                den = r.choice([self.pyint(sc, nonzero=True)[0], self.pyfloat(), f"({self.abs_form(self.it(sc, 0))} + 1)"])
                return f"({a} / {den})"
            if k == "mul":
                return f"({a} * {self.pyfloat()})"
            return f"({a} {r.choice('+-')} {self.pyfloat()})"
        k = r.randrange(8)
        a = self.ft(sc, d - 1)
        if k == 0:
            return f"({a} * {r.choice([self.pyfloat(), self.pyint(sc)[0]])})"
        if k == 1:
            return f"({a} {r.choice('+-')} {r.choice([self.it(sc, d - 1), self.ft(sc, d - 1)])})"
        if k == 2:
            fn = r.choice(["floor", "ceil"])
            return r.choice([f"torch.{fn}({a})", f"({a}).{fn}()"])
        if k == 3:
            return self.abs_form(a)
        if k == 4:
            return f"torch.where({self.bt(sc, d - 1)}, {a}, {self.pyfloat()})"
        if k == 5:
            return f"({a}).clamp(min={self.pyfloat()})"
        if k == 6:
            return f"({a} / {r.choice(['2', '4.0', '0.5', '3'])})"
        return a

    def bt_leaf(self, sc, d):
        r = self.r
        if (self.rows or self.vecs) and sc.q is not None and r.random() < 0.2:
            return self.vector_bool(sc)
        k = r.randrange(12)
        if k <= 4:
            left = self.it(sc, 2) if r.random() < 0.8 else self.ft(sc, 1)
            right = r.choice([self.it(sc, 1), self.pyint(sc)[0], self.pyint(sc)[0], self.pyfloat(), self.ft(sc, 0)])
            sides = [left, right]
            if r.random() < 0.3:
                sides.reverse()
            return f"({sides[0]} {r.choice(CMP)} {sides[1]})"
        if k == 5:
            left = self.it(sc, 2)
            return f"({left}).{CMP_METHOD[r.choice(CMP)]}({r.choice([self.it(sc, 1), self.pyint(sc)[0]])})"
        if k in (6, 7):
            got = self.lookup(sc, "bool", 1)
            if got:
                return got
        if k == 8 and sc.bools:
            return r.choice(sc.bools)
        if k in (9, 10) and sc.masks and sc.q is not None:
            return self.call_mask(sc)
        return f"({self.it(sc, 1)} {r.choice(CMP)} {self.it(sc, 1)})"

    def call_mask(self, sc):
        r = self.r
        name, needs_range = r.choice(sc.masks)
        q, kv = (sc.q, sc.kv) if r.random() < 0.8 else (sc.kv, sc.q)
        form = r.randrange(5)
        if form == 0:
            q = f"({q} + {r.randrange(1, 5)}) % {self.n}"
        elif form == 1 and not needs_range:
            q, kv = self.it(sc, 1), self.it(sc, 1)
        else:
            sc.needs_range |= needs_range
        return f"{name}({sc.b}, {sc.h}, {q}, {kv})"

    def bt(self, sc, d):
        r = self.r
        if d <= 0 or r.random() < 0.25:
            return self.bt_leaf(sc, d)
        k = r.randrange(13)
        a = self.bt(sc, d - 1)
        if k <= 4:
            return f"({a} {r.choice('&|')} {self.bt(sc, d - 1)})"
        if k == 5:
            return f"({a} ^ {self.bt(sc, d - 1)})"
        if k == 6:
            return f"(~{a})"
        if k == 7:
            return f"({a} {r.choice(['==', '!='])} {self.bt(sc, d - 1)})"
        if k == 8:
            return f"torch.{r.choice(['logical_and', 'logical_or'])}({a}, {self.bt(sc, d - 1)})"
        if k == 9:
            return f"torch.logical_not({a})"
        if k == 10:
            return f"torch.where({self.bt(sc, d - 1)}, {a}, {self.bt(sc, d - 1)})"
        if k == 11:
            return f"({a} if {self.any_flag()} else {self.bt(sc, d - 1)})"
        return a

    # ---- functions
    def mask_params(self):
        r = self.r
        names = r.choice([("b", "h", "q_idx", "kv_idx")] * 4 + [("batch_idx", "head_idx", "q_idx", "kv_idx"),
                                                                 ("b", "h", "q", "kv"), ("_b", "_h", "qi", "ki")])
        return names

    def signature(self, names, extra=""):
        if self.r.random() < 0.2:
            self.imports.add("from torch import Tensor")
            return ", ".join(f"{p}: Tensor" for p in names) + extra + ") -> Tensor:"
        return ", ".join(names) + extra + "):"

    def body(self, sc, indent, depth=3):
        """Local bindings then a return of a bool expression; returns the lines."""
        r, lines = self.r, []
        for _ in range(r.randrange(0, 4)):
            k = r.randrange(6)
            if k <= 1:
                name = self.fresh(r.choice(["d", "dist", "q_blk", "kv_blk", "gap", "pos"]))
                lines.append(f"{indent}{name} = {self.it(sc, 2)}")
                sc.ints.append(name)
            elif k == 2:
                name = self.fresh(r.choice(["ok", "near", "same", "allow", "causal"]))
                lines.append(f"{indent}{name} = {self.bt(sc, 2)}")
                sc.bools.append(name)
            elif k == 3:
                name = self.fresh(r.choice(["ratio", "frac", "scaled"]))
                lines.append(f"{indent}{name} = {self.ft(sc, 1)}")
                sc.floats.append(name)
            elif k == 4 and self.tuple_helpers:
                helper, types = r.choice(self.tuple_helpers)
                u, v = self.fresh("u"), self.fresh("v")
                a, c = (sc.q, sc.kv) if r.random() < 0.6 else (self.it(sc, 1), self.it(sc, 1))
                lines.append(f"{indent}{u}, {v} = {helper}({a}, {c})")
                sc.ints.append(u)
                (sc.ints if types[1] == "int" else sc.bools).append(v)
            elif k == 5 and self.flags:
                name = self.fresh("ok")
                flag = r.choice(list(self.flags))
                lines.append(f"{indent}{name} = {self.bt(sc, 1)}")
                lines.append(f"{indent}if {flag}:\n{indent}    {name} = {name} & {self.bt(sc, 1)}")
                sc.bools.append(name)
        lines.append(f"{indent}return {self.bt(sc, depth)}")
        return lines

    def add_int_helper(self):
        name = self.fresh(self.r.choice(["block_of", "bucket", "lane", "shifted"]))
        sc = Scope()
        sc.ints.append("i")
        text = f"def {name}(i):\n    return {self.it(sc, 2)}"
        self.int_helpers.append(name)
        return text

    def add_tuple_helper(self):
        r = self.r
        name = self.fresh(r.choice(["to_xy", "split", "coords"]))
        sc = Scope()
        sc.ints += ["x", "y"]
        second = r.choice(["int", "int", "bool"])
        e1 = self.it(sc, 2)
        e2 = self.it(sc, 2) if second == "int" else self.bt(sc, 1)
        ret = f"{e1}, {e2}" if r.random() < 0.5 else f"({e1}, {e2})"
        self.tuple_helpers.append((name, ("int", second)))
        return f"def {name}(x, y):\n    return {ret}"

    def scope_for(self, params):
        sc = Scope(params[2], params[3], params[0], params[1])
        sc.masks = list(self.masks)
        return sc

    def add_part(self, final=False):
        """A module-level mask callable; returns (text, name)."""
        r = self.r
        name = "mask_mod" if final else self.fresh(r.choice(["part", "causal", "window", "doc_mask", "local", "sink"]))
        kind = r.randrange(9)
        if final and len(self.masks) >= 2 and r.random() < 0.3:
            kind = 6
        if kind == 0 or (kind == 8 and len(self.masks) < 2):
            params = self.mask_params()
            sc = self.scope_for(params)
            text = f"def {name}({self.signature(params)}\n" + "\n".join(self.body(sc, "    "))
        elif kind == 1:
            params = self.mask_params()
            sc = self.scope_for(params)
            text = f"{name} = lambda {', '.join(params)}: {self.bt(sc, 3)}"
        elif kind == 2:
            factory = self.fresh(r.choice(["make_mask", "generate_window", "build"]))
            vals = [self.pyint(Scope(), nonzero=True) for _ in range(r.randrange(1, 3))]
            pnames = ["p", "r"][:len(vals)]
            params = self.mask_params()
            sc = self.scope_for(params)
            sc.pyints = {p: v[1] for p, v in zip(pnames, vals)}
            inner = self.fresh("inner")
            body = "\n".join(self.body(sc, "        "))
            if r.random() < 0.5:
                args = ", ".join(f"{p}={v[0]}" for p, v in zip(pnames, vals))
            else:
                args = ", ".join(v[0] for v in vals)
            text = (f"def {factory}({', '.join(pnames)}):\n    def {inner}({self.signature(params)}\n{body}\n\n"
                    f"    return {inner}\n\n\n{name} = {factory}({args})")
        elif kind == 3:
            factory = self.fresh("make")
            val = self.pyint(Scope(), nonzero=True)
            params = self.mask_params()
            sc = self.scope_for(params)
            sc.pyints = {"w": val[1]}
            text = f"{factory} = lambda w: lambda {', '.join(params)}: {self.bt(sc, 3)}\n{name} = {factory}({val[0]})"
        elif kind == 4:
            self.imports.add(r.choice(["import functools", "from functools import partial"]))
            partial = "functools.partial" if "import functools" in self.imports else "partial"
            base = self.fresh("base")
            params = self.mask_params()
            sc = self.scope_for(params)
            vals = [self.pyint(Scope(), nonzero=True) for _ in range(2)]
            sc.pyints = {"p": vals[0][1], "r": vals[1][1]}
            if r.random() < 0.5:
                text = (f"def {base}({', '.join(params)}, p, r):\n" + "\n".join(self.body(sc, "    "))
                        + f"\n\n\n{name} = {partial}({base}, p={vals[0][0]}, r={vals[1][0]})")
            else:
                text = (f"def {base}(p, r, {', '.join(params)}):\n" + "\n".join(self.body(sc, "    "))
                        + f"\n\n\n{name} = {partial}({base}, {vals[0][0]}, {vals[1][0]})")
        elif kind == 5 and self.masks:
            inner, needs = r.choice(self.masks)
            wrap = self.fresh(r.choice(["causal_wrap", "with_window", "restrict"]))
            params = self.mask_params()
            sc = self.scope_for(params)
            sc.masks = [("fn", needs)]
            body = "\n".join(self.body(sc, "        "))
            text = (f"def {wrap}(fn):\n    def wrapped({', '.join(params)}):\n{body}\n\n    return wrapped\n\n\n"
                    f"{name} = {wrap}({inner})")
            sc.needs_range |= needs
        elif kind == 6 and self.masks:
            sc = Scope()
            picks = r.sample(self.masks, min(len(self.masks), r.randrange(1, 4)))
            sc.needs_range = any(nr for _, nr in picks)
            names = [p for p, _ in picks]
            if r.random() < 0.4:
                params = self.mask_params()
                lsc = self.scope_for(params)
                names.append(f"lambda {', '.join(params)}: {self.bt(lsc, 2)}")
                sc.needs_range |= lsc.needs_range
            self.imports.add("from torch.nn.attention.flex_attention import and_masks, or_masks")
            combo = r.choice(["and_masks", "or_masks"])
            if len(names) >= 3 and r.random() < 0.5:
                other = "or_masks" if combo == "and_masks" else "and_masks"
                text = f"{name} = {combo}({names[0]}, {other}({', '.join(names[1:])}))"
            else:
                text = f"{name} = {combo}({', '.join(names)})"
        elif kind == 7 and self.masks:
            target, needs = r.choice(self.masks)
            sc = Scope()
            sc.needs_range = needs
            text = f"{name} = {target}"
        else:
            params = self.mask_params()
            sc = self.scope_for(params)
            text = f"def {name}({self.signature(params)}\n" + "\n".join(self.body(sc, "    "))
        self.masks.append((name, sc.needs_range))
        return text

    def flawed(self):
        """A final mask_mod torch cannot run; returns its text."""
        r = self.r
        params = ("b", "h", "q_idx", "kv_idx")
        sc = self.scope_for(params)
        flaw = r.choice(FLAWS)
        a, c = self.bt(sc, 2), self.bt(sc, 2)
        if flaw in ("and", "or"):
            ret = [f"    return {a} {flaw} {c}"]
        elif flaw == "not":
            ret = [f"    return not {a}"]
        elif flaw == "if":
            ret = [f"    if {a}:", f"        return {c}", f"    return {self.bt(sc, 1)}"]
        elif flaw in ("min", "max"):
            ret = [f"    m = {flaw}(q_idx, kv_idx)", f"    return (m {r.choice(CMP)} {self.it(sc, 1)}) | {a}"]
        elif flaw == "chain":
            ret = [f"    return 0 <= kv_idx <= q_idx + {r.randrange(0, 4)}"]
        elif flaw == "oob":
            name = self.fresh("table")
            size = r.randrange(1, max(2, self.n))
            self.blocks.append(f"{name} = torch.arange({size})")
            ret = [f"    return ({name}[q_idx + {size}] > 0) | {a}"]
        elif flaw == "bool":
            ret = [f"    return bool({a})"]
        else:
            ret = [f"    w = int(q_idx - kv_idx)", f"    return (w > 0) & {a}"]
        return "def mask_mod(b, h, q_idx, kv_idx):\n" + "\n".join(ret)

    def program(self, flaw=False):
        r = self.r
        self.blocks.append(self.add_consts())
        if self.use_bh:
            self.blocks.append(self.add_bh_tensor())
        for _ in range(r.randrange(0, 4)):
            self.blocks.append(self.add_tensor())
        for _ in range(r.randrange(0, 3) if r.random() < 0.35 else 0):
            self.blocks.append(self.add_rows())
        for _ in range(r.randrange(0, 2)):
            self.blocks.append(self.add_int_helper())
        if r.random() < 0.3:
            self.blocks.append(self.add_tuple_helper())
        for _ in range(r.randrange(0, 4)):
            self.blocks.append(self.add_part())
        final_name = "mask_mod"
        if flaw:
            self.blocks.append(self.flawed())
        else:
            text = self.add_part(final=True)
            if r.random() < 0.1:
                # no global named mask_mod: the last 4-argument callable is taken
                final_name = self.fresh(r.choice(["attn_mask", "document_causal", "local_mask"]))
                text = text.replace("mask_mod", final_name)
            self.blocks.append(text)
        if not flaw and r.random() < 0.12:
            # A BlockMask object: its mask_mod read back, or the object itself as the entry.
            self.imports.add("from torch.nn.attention.flex_attention import create_block_mask")
            bs = r.choice([4, 8, 16, (4, 8)])
            inner = self.fresh("inner")
            self.blocks[-1] = self.blocks[-1].replace(final_name, inner)
            bm = self.fresh("block_mask")
            made = f"{bm} = create_block_mask({inner}, 1, 1, {self.n}, {self.n}, device=\"cuda\", BLOCK_SIZE={bs})"
            if r.random() < 0.5:
                self.blocks.append(f"{made}\nmask_mod = {bm}.mask_mod")
                final_name = "mask_mod"
            else:
                self.blocks.append(made)
                final_name = bm
        if r.random() < 0.2:
            self.blocks.append(f"BLOCK_SIZE = 128\nprint({final_name})")
        if r.random() < 0.2:
            self.imports.add("from torch.nn.attention.flex_attention import create_block_mask")
            self.blocks.append(f'if __name__ == "__main__":\n    bm = create_block_mask({final_name}, 1, 1, 2048, 2048, '
                               f'device="cuda")\n    print(bm.sparsity())')
        head = "\n".join(sorted(self.imports))
        return head + "\n\n" + "\n\n\n".join(b for b in self.blocks if b) + "\n"


TALLY = Tally()
check = TALLY.check
TMP = tempfile.mkdtemp(prefix="hasseflow-maskmod-random-")
if KEEP:
    os.makedirs(KEEP, exist_ok=True)
rng = random.Random(SEED)
agreed = refused_both = flawed_total = 0
outcomes = {}
for i in range(COUNT):
    n = rng.randrange(1, 65) if rng.random() < 0.9 else rng.randrange(1, 5)
    use_bh = rng.random() < 0.25
    b, h = (rng.randrange(0, 3), rng.randrange(0, 4)) if use_bh else (0, 0)
    flaw = rng.random() < 0.05
    flawed_total += flaw
    path = os.path.join(KEEP or TMP, f"prog_{i:03d}.py")
    for _attempt in range(8):
        # Programs whose mask is all set or all unset test little: write another (seeded, so the
        # same 300 every run).
        gen = Gen(random.Random(rng.randrange(1 << 30)), n, b, h, use_bh)
        text = gen.program(flaw)
        with open(path, "w") as f:
            f.write(text)
        if flaw or n < 2:
            break
        cells, _ = torch_side(path, n, b, h)
        if cells is not None and cells.any() and not cells.all():
            break
    what = f"program #{i} (n={n}{f', b={b} h={h}' if use_bh else ''}{', flawed' if flaw else ''})"
    if TORCH_ONLY:
        theirs, why = torch_side(path, n, b, h)
        ok = (theirs is None) == flaw
        key = "torch-ok" if theirs is not None else "torch-refuses"
        outcomes[key] = outcomes.get(key, 0) + 1
        check(ok, f"{what}: torch {'ran it' if theirs is not None else 'refused: ' + why}\n{text}")
        continue
    outcome, detail, torch_error, _ = compare(path, n, b, h, use_bh)
    outcomes[outcome] = outcomes.get(outcome, 0) + 1
    if outcome == "equal":
        agreed += 1
        check(True, what)
    elif outcome == "refused-both":
        refused_both += 1
        check(located(detail, text), f"{what}: refused by both, but hasseflow's refusal does not say "
                                     f"`line L, column C: <construct>`: {detail!r}\n{text}")
    else:
        check(False, f"{what}: {outcome}: {detail}\n{text}")
    if not flaw and torch_error is not None:
        print(f"note: {what}: the generator wrote a program torch refuses: {torch_error}")

print("outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
if not TORCH_ONLY:
    print(f"{BIN}: {agreed} of {COUNT} random programs agreed with torch, {refused_both} refused by both "
          f"({flawed_total} written with a flaw torch cannot run)")
    check(agreed >= COUNT * 9 // 10, f"only {agreed} of {COUNT} random programs agreed (at least {COUNT * 9 // 10})")
shutil.rmtree(TMP, ignore_errors=True)
exit_with(TALLY)
