"""Shared by test_mask_mod_wild.py and test_mask_mod_random.py: a mask_mod file run both ways,
by `hasseflow convert FILE --n N --to text` and by torch's `create_mask`, and the outcome.

- Torch side: the file is imported as a module (so `if __name__ == "__main__":` blocks never run)
  with every CUDA request sent to the CPU: `torch.set_default_device` is a no-op,
  `torch.cuda.is_available()` is False, `Tensor.cuda()` / `Module.cuda()` return the object, and a
  torch function mode rewrites `device="cuda..."` arguments (and `.to("cuda")`) to the CPU while the
  module loads. The entry is the global named `mask_mod`, else the last module-level global bound
  to a callable taking four positional arguments (the reader's rule, computed from the source's
  statement order and the loaded values); `create_mask(fn, B=b+1, H=h+1, Q_LEN=n, KV_LEN=n)[b, h]`.
  A FlexAttention `BlockMask` is an entry too: its block tables combined with its mask_mod, as
  the compiled kernel applies them (`block_mask_cells`).
- Outcomes: "equal", "WRONG" (both ran, cells differ), "refused" (hasseflow refused, torch ran),
  "refused-both", "accepted-only" (hasseflow produced a mask where torch raised).
"""

import ast
import contextlib
import importlib.util
import inspect
import io
import re
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn
from torch.nn.attention.flex_attention import BlockMask, create_mask
from torch.overrides import TorchFunctionMode

from cases import cli

warnings.filterwarnings("ignore")

# ---- CUDA requests go to the CPU


def _is_cuda(x):
    if isinstance(x, str):
        return x.startswith("cuda")
    return isinstance(x, torch.device) and x.type == "cuda"


class CudaToCpu(TorchFunctionMode):
    """Rewrites device arguments naming CUDA to the CPU (factories, `.to(...)`, `.new_*`)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if _is_cuda(kwargs.get("device")):
            kwargs["device"] = "cpu"
        args = tuple("cpu" if _is_cuda(a) else a for a in args)
        return func(*args, **kwargs)


torch.set_default_device = lambda device=None: None
torch.cuda.is_available = lambda: False
torch.cuda.synchronize = lambda *a, **k: None
torch.Tensor.cuda = lambda self, *a, **k: self
nn.Module.cuda = lambda self, *a, **k: self

_loaded = 0


def load_module(path):
    """Imports the file as a fresh module (CUDA sent to the CPU, its prints swallowed)."""
    global _loaded
    _loaded += 1
    sys.dont_write_bytecode = True  # no __pycache__ next to the corpus or the generated programs
    spec = importlib.util.spec_from_file_location(f"hasseflow_wild_{_loaded}", path)
    mod = importlib.util.module_from_spec(spec)
    # As an import does: the module is in sys.modules while it runs (a @dataclass under
    # `from __future__ import annotations` looks its module up there).
    sys.modules[spec.name] = mod
    with contextlib.redirect_stdout(io.StringIO()), CudaToCpu():
        spec.loader.exec_module(mod)
    return mod


# ---- the entry rule

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def is_block_mask(obj):
    """A FlexAttention BlockMask object: the reader takes it as the mask it stands for."""
    return isinstance(obj, BlockMask)


def block_mask_cells(bm, n, b, h):
    """The mask a BlockMask stands for, as compiled FlexAttention applies it: a cell is attended
    when its key block is listed as a full block of its query block, or listed as a partial block
    and its mask_mod holds there (torch's eager fallback ignores the tables; the kernel does not)."""
    qbs, kbs = bm.BLOCK_SIZE

    def listed(num, idx):
        if num is None:
            return None
        # A table with one batch (head) serves every batch (head); otherwise b (h) indexes it.
        num = num[b if num.shape[0] > 1 else 0, h if num.shape[1] > 1 else 0]
        idx = idx[b if idx.shape[0] > 1 else 0, h if idx.shape[1] > 1 else 0]
        out = torch.zeros(num.shape[0], idx.shape[-1], dtype=torch.bool)
        for qb in range(num.shape[0]):
            for j in range(int(num[qb])):
                out[qb, int(idx[qb, j])] = True
        return out

    partial = listed(bm.kv_num_blocks, bm.kv_indices)
    full = listed(bm.full_kv_num_blocks, bm.full_kv_indices)
    qb = torch.arange(n) // qbs
    kb = torch.arange(n) // kbs
    cells = create_mask(bm.mask_mod, B=b + 1, H=h + 1, Q_LEN=n, KV_LEN=n, device="cpu")
    cells = cells.expand(b + 1, h + 1, n, n)[b, h]
    out = partial[qb][:, kb] & cells
    if full is not None:
        out = out | full[qb][:, kb]
    return out


def takes_four(obj):
    """A function (def, lambda, partial, ...; not a class) with exactly four required positional
    parameters and no other required ones."""
    if inspect.isclass(obj) or not callable(obj):
        return False
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return False
    required = [p for p in sig.parameters.values() if p.default is inspect.Parameter.empty
                and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
    return len(required) == 4 and all(p.kind in _POSITIONAL for p in required)


def _is_main_guard(node):
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__")


def _targets(t):
    if isinstance(t, ast.Name):
        yield t.id
    elif isinstance(t, (ast.Tuple, ast.List)):
        for e in t.elts:
            yield from _targets(e)
    elif isinstance(t, ast.Starred):
        yield from _targets(t.value)


def module_bindings(source):
    """(line, name) of every module-level binding in source order, `__main__` blocks skipped
    (module-level if/for/while/with/try bodies included: both branches, the values decide)."""
    out = []

    def walk(body):
        for node in body:
            if _is_main_guard(node):
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.append((node.lineno, node.name))
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    out.extend((node.lineno, n) for n in _targets(t))
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                out.extend((node.lineno, n) for n in _targets(node.target))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for a in node.names:
                    out.append((node.lineno, (a.asname or a.name).split(".")[0]))
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                out.extend((node.lineno, n) for n in _targets(node.target))
                walk(node.body)
                walk(node.orelse)
            elif isinstance(node, (ast.If, ast.While)):
                walk(node.body)
                walk(node.orelse)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                walk(node.body)
            elif isinstance(node, ast.Try):
                walk(node.body)
                for hnd in node.handlers:
                    walk(hnd.body)
                walk(node.orelse)
                walk(node.finalbody)

    walk(ast.parse(source).body)
    return out


def entry_name(source, mod):
    """The reader's rule: `mask_mod`, else the last module-level global whose value takes four
    positional arguments; None when there is none."""
    if "mask_mod" in vars(mod):
        return "mask_mod"
    last = None
    for _line, name in module_bindings(source):
        if name in vars(mod) and (takes_four(getattr(mod, name)) or is_block_mask(getattr(mod, name))):
            last = name
    return last


# ---- the two sides


def error_line(e):
    """An exception in one line: its type and the first line of its message."""
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"


def broadcast_mask(fn, n):
    """The mask function run once on broadcast index tensors (b = h = 0): (the n x n bool array,
    None), or (None, why not) when it returns another dtype. For elementwise mask code this is
    what create_mask computes, without its four vmaps; exceptions propagate."""
    q = torch.arange(n)
    m = torch.as_tensor(fn(torch.tensor(0), torch.tensor(0), q[:, None], q[None, :]))
    if m.dtype != torch.bool:
        return None, f"the mask_mod returned {m.dtype}"
    return m.expand(n, n).numpy().copy(), None


def torch_side(path, n, b=0, h=0, entry=None):
    """(mask as a bool array, None) or (None, why torch refused). `entry` overrides the rule.
    torch's default dtype is put back after each file: one that sets it must not change the
    next file's `torch.Tensor(...)` or float factories."""
    default_dtype = torch.get_default_dtype()
    try:
        return _torch_side(path, n, b, h, entry)
    finally:
        torch.set_default_dtype(default_dtype)


def _torch_side(path, n, b, h, entry):
    try:
        with open(path) as f:
            source = f.read()
        mod = load_module(path)
        name = entry or entry_name(source, mod)
        if name is None:
            return None, "no mask function in the module"
        fn = getattr(mod, name)
        if is_block_mask(fn):
            return block_mask_cells(fn, n, b, h).numpy().copy(), None
        m = create_mask(fn, B=b + 1, H=h + 1, Q_LEN=n, KV_LEN=n, device="cpu")
        if m.dtype != torch.bool:
            return None, f"the mask_mod returned {m.dtype}, not torch.bool"
        m = m.expand(b + 1, h + 1, n, n)[b, h]
        return m.numpy().copy(), None
    except Exception as e:  # noqa: BLE001 - torch refusing the file is an outcome we compare
        return None, error_line(e)


def hasseflow_args(path, n, b=0, h=0, bh=False):
    args = ["convert", path, "--n", str(n), "--to", "text"]
    if bh or b or h:
        args += ["--batch", str(b), "--head", str(h)]
    return args


def hasseflow_side(path, n, b=0, h=0, bh=False):
    """(mask as a bool array, None) or (None, stderr of the refusal)."""
    p = cli(hasseflow_args(path, n, b, h, bh), expect_ok=False)
    if p.returncode != 0:
        return None, p.stderr.decode(errors="replace").strip()
    rows = [line for line in p.stdout.decode(errors="replace").split("\n") if line]
    got = np.array([[c == "1" for c in line] for line in rows], dtype=bool)
    if got.shape != (n, n):
        return None, f"(exit 0 but the text output is {got.shape}, not ({n}, {n}))"
    return got, None


LOCATED = re.compile(r"line (\d+), column (\d+)[:,]? *(\S.*)")


def located(message, source):
    """True when the refusal names a place inside the source, `line L, column C`, and says
    something about the construct after it."""
    m = LOCATED.search(message)
    if not m:
        return False
    lines = source.split("\n")
    line, col = int(m.group(1)), int(m.group(2))
    return 1 <= line <= len(lines) and 1 <= col <= len(lines[line - 1]) + 1 and len(m.group(3)) >= 3


def describe_diff(ours, theirs, limit=6):
    cells = np.argwhere(ours != theirs)
    shown = ", ".join(f"(q={q}, kv={k}: hasseflow {int(ours[q, k])}, torch {int(theirs[q, k])})"
                      for q, k in cells[:limit])
    return f"{len(cells)} cells differ: {shown}{' ...' if len(cells) > limit else ''}"


def compare(path, n, b=0, h=0, bh=False, entry=None):
    """Runs both sides; returns (outcome, detail, torch_error, hasseflow_error)."""
    theirs, torch_error = torch_side(path, n, b, h, entry)
    ours, our_error = hasseflow_side(path, n, b, h, bh)
    if theirs is not None and ours is not None:
        if np.array_equal(ours, theirs):
            return "equal", "", None, None
        return "WRONG", describe_diff(ours, theirs), None, None
    if theirs is not None:
        return "refused", our_error, None, our_error
    if ours is not None:
        return "accepted-only", f"hasseflow gave a mask; torch raised {torch_error}", torch_error, None
    return "refused-both", our_error, torch_error, our_error
