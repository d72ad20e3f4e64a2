#!/usr/bin/env python3
"""Two generated fuzzes of the mask_mod reader against torch, aimed where stop 57 found it wrong:

1. **Views and in-place writes.** A small tensor, a chain of one to four views of it (every view
   torch makes, as methods, functions and attributes: slices, `t`/`T`/`mT`, `permute`, `movedim`,
   `view`/`reshape`/`flatten`, `narrow`, `split`/`chunk`/`unbind`, `expand`/`broadcast_to`,
   `diagonal`, `select`, `.real`, `.data`, ...) and copies among them, then one to three in-place
   writes through any of them (item assignment at basic and advanced indices, `+=`, `fill_`,
   `index_put_`, `scatter_`, `masked_fill_`, `copy_`, methods the reader does not model), some in a
   loop over rows; the mask reads some of the tensors. Half as many again pass their views through
   Python first (a list, a dict, a function's result, a class attribute, a comprehension, a loop,
   a function the text calls, a `with` block).
2. **0-d and empty tensors** through every method that takes a dimension, with dimensions in and
   out of range.

Every module must end one of four ways: equal to torch, refused, refused by both, or (only where
the reader skipped a statement it cannot run, so that torch's error in it is not seen) a mask
where torch raised. A different mask, a panic, or a mask where torch raised and nothing was
skipped fails.

Usage: test_mask_mod_edges.py [BIN] [--count N] [--seed S]   (default: 1,000 + 500 modules of seed 57)
"""

import os
import random
import sys
import tempfile

COUNT, SEED = 1_000, 57
for flag in ("--count", "--seed"):
    if flag in sys.argv:
        i = sys.argv.index(flag)
        value = int(sys.argv[i + 1])
        del sys.argv[i:i + 2]
        COUNT, SEED = (value, SEED) if flag == "--count" else (COUNT, value)

import numpy as np  # noqa: E402

from cases import cli  # noqa: E402
from mask_mod_oracle import broadcast_mask, describe_diff, error_line, hasseflow_args, load_module  # noqa: E402
from tally import Tally, exit_with  # noqa: E402

# `{x}`: the tensor viewed; `{i}`: a small index (maybe out of range); `{j}`: 0 or 1.
VIEWS = [
    "{x}[{i}]", "{x}[{i}:]", "{x}[:, {i}]", "{x}[::2]", "{x}[1::2]", "{x}.t()", "{x}.T", "{x}.mT",
    "{x}.transpose(0, 1)", "{x}.permute(1, 0)", "{x}.view(-1)", "{x}.reshape(-1)", "{x}.flatten()",
    "{x}.unsqueeze(0)", "{x}.squeeze()", "{x}.narrow(0, {i}, 1)", "{x}.narrow(-1, 0, 2)",
    "{x}.split(2)[{j}]", "{x}.chunk(2)[{j}]", "{x}.unbind(0)[{i}]", "torch.unbind({x})[{i}]",
    "{x}.expand(2, *{x}.shape)", "{x}.diagonal()", "torch.diagonal({x})", "{x}.select(0, {i})",
    "{x}.movedim(0, -1)", "{x}.swapaxes(0, -1)", "{x}.view_as({x})", "{x}.detach()", "{x}.to({x}.dtype)",
    "{x}.contiguous()", "{x}[None]", "{x}[...]", "{x}[..., {i}]", "torch.narrow({x}, 0, 0, 2)",
    "torch.t({x})", "torch.transpose({x}, 0, 1)", "torch.squeeze({x})", "torch.unsqueeze({x}, -1)",
    "torch.flatten({x})", "torch.reshape({x}, (-1,))", "torch.select({x}, -1, 0)", "{x}.ravel()",
    "torch.split({x}, 1)[{i}]", "torch.chunk({x}, 3)[0]", "{x}.unflatten(0, (1, -1))", "{x}.data",
    "{x}[{i}:{i} + 2]", "{x}.view({x}.shape)", "{x}[-1]", "{x}.squeeze(0)", "{x}.expand_as({x})",
    "{x}.clone()", "{x} + 0", "{x}.flip(0)", "{x}.roll(1, 0)", "{x}.repeat(1)",
    "{x}.unfold(0, 2, 1)", "{x}.as_strided((2,), (1,))", "{x}.view(torch.int32)", "{x}.swapdims(0, -1)",
    "torch.movedim({x}, -1, 0)", "{x}.broadcast_to((2, *{x}.shape))", "torch.atleast_2d({x})",
    "{x}.real", "torch.permute({x}, tuple(range({x}.dim() - 1, -1, -1)))", "{x}.tensor_split(2)[{j}]",
    "{x}.moveaxis(0, -1)", "torch.broadcast_to({x}, (2, *{x}.shape))",
]

WRITES = [
    "{x}[{i}] = {c}", "{x}[{i}:] = {c}", "{x} += {c}", "{x}.add_({c})", "{x}.mul_({c})", "{x}.fill_({c})",
    "{x}.zero_()", "{x}.masked_fill_({x} > {c}, {d})", "{x}.index_fill_(0, torch.tensor([{i}]), {c})",
    "{x}.clamp_(0, {c})", "{x}[{x} > {c}] = {d}", "{x}[[0]] = {c}", "{x}.copy_({x}.clone().flip(0))",
    "{x}.neg_()", "{x}.abs_()", "{x}.sub_({c})", "{x}[...] = {c}", "{x}.fill_diagonal_({c})",
    "{x}.scatter_(0, torch.zeros_like({x}), {c})", "{x}.index_put_((torch.tensor([0]),), torch.tensor({c}))",
    "{x}.remainder_(3)", "{x} *= 2", "{x} -= 1", "{x} //= 2", "{x}.put_(torch.tensor([0]), torch.tensor([{c}]))",
    "{x}.squeeze_()", "{x}.unsqueeze_(0)", "{x}.t_()", "{x}.bitwise_and_(3)", "{x}.bitwise_or_({c})",
    "{x}.copy_(torch.tensor({c}))", "{x}.index_copy_(0, torch.tensor([0]), {x}[:1].clone())", "{x}.lt_({c})",
    "{x}.floor_divide_(2)", "{x}.index_add_(0, torch.tensor([0]), {x}[:1].clone())", "{x}.data.add_({c})",
    "{x}[:] = {x}.flip(0).clone()", "torch.add({x}, {c}, out={x})", "{x}.apply_(lambda v: v + 1)",
    "{x}[torch.tensor([0])] = torch.tensor({c})", "{x}[torch.tensor(True)] = {c}",
    "{x}.masked_scatter_({x} > 0, torch.full_like({x}, {c}))",
]

DTYPES = ["torch.long", "torch.int32", "torch.int16", "torch.uint8", "torch.int8", "torch.float32", "torch.float64"]


def prologue(r, min_cols):
    """The module's first lines (a small table `B`), and a random view of a named tensor."""
    rows, cols = r.randint(1, 4), r.randint(min_cols, 4)
    lines = [
        "import torch", "",
        f"B = (torch.arange({rows * cols}) * {r.randint(1, 7)} % {r.randint(2, 9)}).reshape({rows}, {cols}).to({r.choice(DTYPES)})",
    ]
    return lines, lambda src: r.choice(VIEWS).format(x=src, i=r.randint(-1, 2), j=r.randint(0, 1))


def aliasing_module(r):
    lines, view_of = prologue(r, 1)
    names = ["B"]
    for k in range(r.randint(1, 4)):
        expr = r.choice(names)
        for _ in range(r.choice([1, 1, 2])):
            expr = f"({view_of(expr)})"
        lines.append(f"V{k} = {expr[1:-1]}")
        names.append(f"V{k}")
    for _ in range(r.randint(1, 3)):
        x = r.choice(names)
        write = r.choice(WRITES).format(x="{x}", i=r.randint(-1, 2), c=r.randint(0, 5), d=r.randint(0, 5))
        if r.random() < 0.25:
            lines += [f"for row in {x}:", "    " + write.format(x="row")]
        else:
            lines.append(write.format(x=x))
        if r.random() < 0.3:
            lines.append(f"W{len(names)} = {view_of(r.choice(names))}")
            names.append(f"W{len(names)}")
    reads = r.sample(names, min(len(names), r.randint(1, 3)))
    terms = " + ".join(f"{t}.flatten()[(q * {r.randint(1, 5)} + kv * {j + 1}) % max({t}.numel(), 1)].long()"
                       for j, t in enumerate(reads))
    lines += ["", "", "def mask_mod(b, h, q, kv):", f"    return ({terms}) % 3 == {r.randint(0, 2)}"]
    return "\n".join(lines) + "\n"


def routed_module(r):
    """Views passed through Python before they are written: a list, a dict, a function's result,
    a class attribute, tuple unpacking, a comprehension over rows, a loop over rows, a write in a
    function the text calls, a `with` block."""
    lines, view_of = prologue(r, 2)
    names = ["B"]

    def write(x):
        return r.choice(WRITES).format(x=x, i=r.randint(-1, 2), c=r.randint(0, 5), d=r.randint(0, 5))

    for k in range(r.randint(2, 5)):
        src, v = r.choice(names), f"V{k}"
        lines += r.choice([
            [f"HELD{k} = [{view_of(src)}, {src}]", f"{v} = HELD{k}[{r.randint(0, 1)}]"],
            [f"BY_NAME{k} = {{'t': {view_of(src)}}}", f"{v} = BY_NAME{k}['t']"],
            [f"def view{k}(t):", f"    return {view_of('t')}", f"{v} = view{k}({src})"],
            [f"def bump{k}():", f"    {write(src)}", f"bump{k}()", f"{v} = {src}"],
            [f"class Holder{k}:", f"    T = {view_of(src)}", f"{v} = Holder{k}.T"],
            [f"{v}, _ = {view_of(src)}, 0"],
            [f"for row in {src}:", f"    {write('row')}", f"{v} = {src}"],
            [f"ROWS{k} = [{view_of('p')} for p in {src}]", f"{v} = ROWS{k}[0] if ROWS{k} else {src}"],
            ["with torch.no_grad():", f"    {v} = {view_of(src)}", f"    {write(v)}"],
            [f"{v} = {view_of(src)}", write(v)],
        ])
        names.append(v)
        if r.random() < 0.5:
            lines.append(write(r.choice(names)))
    reads = r.sample(names, min(len(names), r.randint(1, 3)))
    terms = " + ".join(f"{t}.flatten()[(q * {r.randint(1, 5)} + kv * {j + 1}) % max({t}.numel(), 1)].long()"
                       for j, t in enumerate(reads))
    lines += ["", "", "def mask_mod(b, h, q, kv):", f"    return ({terms}) % 3 == {r.randint(0, 2)}"]
    return "\n".join(lines) + "\n"


SMALL = ["torch.tensor(5)", "torch.tensor([], dtype=torch.long)", "torch.zeros(2, 0, dtype=torch.long)",
         "torch.zeros(0, 3, dtype=torch.long)", "torch.tensor([[1, 2], [3, 4]])", "torch.tensor(True)",
         "torch.tensor(2.5)"]
WITH_DIM = [
    "{x}.cumsum({d})", "{x}.cummax({d})[0]", "{x}.cummin({d})[1]", "{x}.diff(dim={d})", "{x}.flip({d})",
    "{x}.roll(1, {d})", "{x}.narrow({d}, 0, 0)", "{x}.split(1, {d})[0]", "{x}.chunk(2, {d})[0]", "{x}.unbind({d})[0]",
    "{x}.sort({d})[0]", "{x}.argsort({d})", "{x}.topk(1, {d})[0]", "{x}.index_fill({d}, torch.tensor([0]), 1)",
    "{x}.index_select({d}, torch.tensor([0]))", "{x}.gather({d}, torch.zeros_like({x}))",
    "{x}.scatter({d}, torch.zeros_like({x}), 1)", "torch.unique({x}, dim={d})", "torch.unique_consecutive({x}, dim={d})",
    "{x}.sum({d})", "{x}.any({d})", "{x}.all({d})", "{x}.max({d})[0]", "{x}.min({d})[1]", "{x}.argmax({d})",
    "{x}.argmin({d})", "{x}.amax({d})", "{x}.amin({d})", "torch.count_nonzero({x}, {d})", "torch.cat([{x}, {x}], {d})",
    "torch.stack([{x}, {x}], {d})", "{x}.squeeze({d})", "{x}.unsqueeze({d})", "{x}.transpose({d}, 0)",
    "{x}.repeat_interleave(2, dim={d})", "{x}.size({d})", "{x}.flatten({d})", "{x}.prod({d})",
    "{x}.index_copy({d}, torch.tensor([0]), {x}[:1])", "{x}.scatter_reduce({d}, torch.zeros_like({x}), {x}, 'amax')",
    "{x}.diag({d})", "{x}.tril({d})", "{x}.triu({d})", "{x}.permute({d})", "{x}.reshape({d}, -1)", "{x}.expand({d})",
    "torch.topk({x}, 0, {d})[0]", "torch.index_select({x}, {d}, torch.tensor([], dtype=torch.long))",
    "torch.roll({x}, (1,), ({d},))", "torch.narrow({x}, {d}, 0, 1)", "{x}[{d}]", "{x}[..., {d}]", "torch.flip({x}, ({d},))",
]


def dim_modules():
    for x in SMALL:
        for call in WITH_DIM:
            for d in ("0", "-1", "1", "-2"):
                yield (f"import torch\nX = {call.format(x=x, d=d)}\n"
                       "Y = (torch.as_tensor(X).sum() if isinstance(X, torch.Tensor) else torch.tensor(X)).long()\n\n\n"
                       "def mask_mod(b, h, q, kv):\n    return q + Y >= kv\n")


def torch_mask(path, n):
    try:
        return broadcast_mask(load_module(path).mask_mod, n)
    except Exception as e:  # noqa: BLE001 - torch refusing the module is an outcome compared
        return None, error_line(e)


def reader_mask(path, n):
    """As mask_mod_oracle.hasseflow_side, and whether the reader skipped a statement."""
    p = cli(hasseflow_args(path, n), expect_ok=False)
    err = p.stderr.decode(errors="replace")
    if p.returncode != 0:
        return None, err.strip(), False
    rows = [line for line in p.stdout.decode().split("\n") if line]
    return np.array([[c == "1" for c in line] for line in rows], dtype=bool), None, "skipped" in err


def run():
    t = Tally()
    outcomes = {}
    r = random.Random(SEED)
    routed = COUNT // 2
    modules = [aliasing_module(r) for _ in range(COUNT)] + [routed_module(r) for _ in range(routed)]
    modules += list(dim_modules())
    with tempfile.TemporaryDirectory() as tmp:
        for k, source in enumerate(modules):
            path = os.path.join(tmp, f"m{k}.py")
            with open(path, "w") as f:
                f.write(source)
            n = 8
            theirs, torch_error = torch_mask(path, n)
            ours, our_error, skipped = reader_mask(path, n)
            if our_error and "panicked" in our_error:
                outcome = "panic"
            elif theirs is not None and ours is not None:
                outcome = "equal" if np.array_equal(ours, theirs) else "WRONG"
            elif theirs is not None:
                outcome = "refused"
            elif ours is not None:
                outcome = "accepted after a skip" if skipped else "accepted where torch raised"
            else:
                outcome = "refused by both"
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            detail = describe_diff(ours, theirs) if outcome == "WRONG" else (our_error or torch_error or "")
            t.check(outcome not in ("WRONG", "panic", "accepted where torch raised"),
                    f"module {k}: {outcome}: {detail[:300]}\n{source}")
    print(f"{COUNT} aliasing modules and {routed} routed through Python (seed {SEED}), "
          f"{len(modules) - COUNT - routed} of 0-d and empty tensors: "
          + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
    t.check(outcomes.get("equal", 0) >= len(modules) // 10, f"too few modules equal to torch to tell: {outcomes}")
    return t


if __name__ == "__main__":
    exit_with(run())
