"""A mask_mod evaluated by blocks, as `create_block_mask` lays a mask out: the function is run once
on *bounds*: `q_idx` and `kv_idx` are the position ranges of every (query block, key block) pair,
and each operation gives bounds of its result over the block (interval arithmetic; a comparison
gives "true on every cell" and "true on some cell"). A block proved all true is a full block, one
proved all false is empty, and only the rest (the partial blocks) are evaluated cell by cell by
torch. Every bound is sound: a block is full or empty only when every one of its cells is, so the
result is exactly the cell-by-cell mask.

An operation the bounds do not model (a Python `if` on a position, `.item()`, an unknown torch
function) raises `Unsupported`, and the caller evaluates every cell instead."""

import numpy as np

from ._native import HasseflowError


class Unsupported(Exception):
    """The mask_mod does something the block bounds do not model."""


def _torch():
    import torch

    return torch


def _const(x):
    """A constant operand (Python number or 0-d tensor) as bounds, or None."""
    torch = _torch()
    if isinstance(x, (bool, np.bool_)):
        v = torch.tensor(bool(x))
        return Tri(v, v)
    if isinstance(x, (int, float, np.integer, np.floating)):
        v = torch.tensor(x)
        return Box(v, v)
    if isinstance(x, torch.Tensor) and x.dim() == 0 and not isinstance(x, (Box, Tri)):
        x = x.detach().to("cpu")
        if x.dtype == torch.bool:
            return Tri(x, x)
        if x.is_complex():
            raise Unsupported("complex")
        return Box(x, x)
    return None


def _operand(x):
    if isinstance(x, (Box, Tri)):
        return x
    c = _const(x)
    if c is None:
        raise Unsupported(f"operand {type(x).__name__}")
    return c


def _box(x):
    x = _operand(x)
    if isinstance(x, Tri):  # a bool used as a number: 0 or 1
        return Box(x.all.long(), x.any.long())
    return x


def _tri(x):
    x = _operand(x)
    if isinstance(x, Box):  # a number used as a bool: nonzero
        return Tri((x.lo > 0) | (x.hi < 0), ~((x.lo == 0) & (x.hi == 0)))
    return x


class _Traced:
    """Shared dispatch: Python operators and torch functions on bounds."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", str(func)).strip("_")
        handler = _HANDLERS.get(name)
        if handler is None:
            raise Unsupported(f"torch.{name}")
        return handler(*args, **(kwargs or {}))

    def __getattr__(self, name):
        handler = _HANDLERS.get(name)
        if handler is None or name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: handler(self, *args, **kwargs)

    def __bool__(self):
        raise Unsupported("a Python branch on a position")

    def __index__(self):
        raise Unsupported("a position used as a Python int")

    __int__ = __float__ = __index__

    # Python's operators (+, -, *, //, %, comparisons, & | ^ ~) are set below from the handlers.

    __hash__ = None

    # Tensor methods (.to, .long, .abs, .clamp, .logical_and, ...) are the handlers, by __getattr__.


class Box(_Traced):
    """A number's bounds over each block: `lo <= value <= hi` on every cell."""

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi


class Tri(_Traced):
    """A bool over each block: `all` (true on every cell), `any` (true on some cell)."""

    def __init__(self, all_, any_):
        self.all, self.any = all_, any_


def _add(a, b):
    a, b = _box(a), _box(b)
    return Box(a.lo + b.lo, a.hi + b.hi)


def _sub(a, b):
    a, b = _box(a), _box(b)
    return Box(a.lo - b.hi, a.hi - b.lo)


def _neg(a):
    a = _box(a)
    return Box(-a.hi, -a.lo)


def _abs(a):
    a = _box(a)
    torch = _torch()
    lo = torch.where(a.lo > 0, a.lo, torch.where(a.hi < 0, -a.hi, torch.zeros_like(a.lo)))
    return Box(lo, torch.maximum(a.lo.abs(), a.hi.abs()))


def _mul(a, b):
    a, b = _box(a), _box(b)
    torch = _torch()
    c = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
    return Box(torch.minimum(torch.minimum(c[0], c[1]), torch.minimum(c[2], c[3])),
               torch.maximum(torch.maximum(c[0], c[1]), torch.maximum(c[2], c[3])))


def _divisor(b):
    b = _box(b)
    if b.lo.dim() or b.hi.dim() or bool(b.lo != b.hi) or bool(b.lo == 0) or b.lo.is_floating_point():
        raise Unsupported("a division by a varying or zero divisor")
    return int(b.lo)


def _floordiv(a, b, rounding_mode="floor"):
    if rounding_mode != "floor":
        raise Unsupported(f"rounding_mode={rounding_mode}")
    a, c = _box(a), _divisor(b)
    if a.lo.is_floating_point():
        raise Unsupported("a float floor division")
    lo, hi = a.lo.div(c, rounding_mode="floor"), a.hi.div(c, rounding_mode="floor")
    return Box(lo, hi) if c > 0 else Box(hi, lo)


def _div(a, b, rounding_mode=None):
    if rounding_mode == "floor":
        return _floordiv(a, b)
    raise Unsupported("a true division")


def _mod(a, b):
    a, c = _box(a), _divisor(b)
    if c < 0 or a.lo.is_floating_point():
        raise Unsupported("a remainder by a negative divisor")
    torch = _torch()
    same = a.lo.div(c, rounding_mode="floor") == a.hi.div(c, rounding_mode="floor")
    return Box(torch.where(same, a.lo.remainder(c), torch.zeros_like(a.lo)),
               torch.where(same, a.hi.remainder(c), torch.full_like(a.hi, c - 1)))


def _minimum(a, b):
    a, b = _box(a), _box(b)
    torch = _torch()
    return Box(torch.minimum(a.lo, b.lo), torch.minimum(a.hi, b.hi))


def _maximum(a, b):
    a, b = _box(a), _box(b)
    torch = _torch()
    return Box(torch.maximum(a.lo, b.lo), torch.maximum(a.hi, b.hi))


def _clamp(a, min=None, max=None):
    out = _box(a)
    if min is not None:
        out = _maximum(out, min)
    if max is not None:
        out = _minimum(out, max)
    return out


def _ge(a, b):
    a, b = _box(a), _box(b)
    return Tri(a.lo >= b.hi, a.hi >= b.lo)


def _gt(a, b):
    a, b = _box(a), _box(b)
    return Tri(a.lo > b.hi, a.hi > b.lo)


def _eq(a, b):
    a, b = _operand(a), _operand(b)
    if isinstance(a, Tri) and isinstance(b, Tri):
        return _not(_xor(a, b))
    a, b = _box(a), _box(b)
    return Tri((a.lo == a.hi) & (b.lo == b.hi) & (a.lo == b.lo), (a.lo <= b.hi) & (b.lo <= a.hi))


def _bitwise(op, *xs):
    """`&`, `|`, `^`, `~`: logical on bools, bitwise on integers (not modelled)."""
    xs = [_operand(x) for x in xs]
    if any(isinstance(x, Box) for x in xs):
        raise Unsupported("a bitwise operation on integers")
    return op(*xs)


def _and(a, b):
    a, b = _tri(a), _tri(b)
    return Tri(a.all & b.all, a.any & b.any)


def _or(a, b):
    a, b = _tri(a), _tri(b)
    return Tri(a.all | b.all, a.any | b.any)


def _not(a):
    a = _tri(a)
    return Tri(~a.any, ~a.all)


def _xor(a, b):
    a, b = _tri(a), _tri(b)
    a_none, b_none = ~a.any, ~b.any
    return Tri((a.all & b_none) | (a_none & b.all), ~((a.all & b.all) | (a_none & b_none)))


def _where(c, x, y):
    c = _operand(c)
    if isinstance(c, Box):
        raise Unsupported("torch.where on a condition that is not a bool")
    x, y = _operand(x), _operand(y)
    torch = _torch()
    if isinstance(x, Tri) or isinstance(y, Tri):
        x, y = _tri(x), _tri(y)
        # every cell true: c everywhere and x all, or c nowhere and y all, or both all
        all_ = (x.all & y.all) | (c.all & x.all) | (~c.any & y.all)
        any_ = (c.any & x.any) | (~c.all & y.any)
        return Tri(all_, any_)
    x, y = _box(x), _box(y)
    lo = torch.where(c.all, x.lo, torch.where(~c.any, y.lo, torch.minimum(x.lo, y.lo)))
    hi = torch.where(c.all, x.hi, torch.where(~c.any, y.hi, torch.maximum(x.hi, y.hi)))
    return Box(lo, hi)


def _to(a, *args, **kwargs):
    torch = _torch()
    dtype = kwargs.get("dtype")
    for x in args:
        if isinstance(x, torch.dtype):
            dtype = x
    if dtype is None:
        return a
    if dtype == torch.bool:
        return _tri(a)
    if dtype.is_floating_point or dtype.is_complex:
        raise Unsupported(f"a conversion to {dtype}")
    return _box(a)


def _like(value):
    def make(x, *args, dtype=None, **kwargs):
        torch = _torch()
        x = _operand(x)
        ref = x.lo if isinstance(x, Box) else x.all
        if dtype == torch.bool or (dtype is None and isinstance(x, Tri)):
            v = torch.full_like(ref, bool(value), dtype=torch.bool)
            return Tri(v, v)
        v = torch.full_like(ref, value, dtype=dtype or ref.dtype)
        return Box(v, v)
    return make


def _full_like(x, fill, *args, **kwargs):
    return _like(fill)(x, *args, **kwargs)


class _RangeTable:
    """Min and max of a 1-d tensor over any index range in O(1) (a sparse table)."""

    def __init__(self, values):
        torch = _torch()
        v = values.to(torch.int64) if values.dtype == torch.bool else values
        mins, maxs = [v], [v]
        k = 1
        while 2 * k <= len(v):
            a, b = mins[-1], maxs[-1]
            mins.append(torch.minimum(a[:-k], a[k:]))
            maxs.append(torch.maximum(b[:-k], b[k:]))
            k *= 2
        self.n, self.mins, self.maxs = len(v), mins, maxs

    def query(self, lo, hi):
        torch = _torch()
        length = hi - lo + 1
        k = torch.floor(torch.log2(length.double())).long()
        k = torch.clamp(k, max=len(self.mins) - 1)
        lo, hi, k = torch.broadcast_tensors(lo, hi, k)
        mn = torch.empty(lo.shape, dtype=self.mins[0].dtype)
        mx = torch.empty(lo.shape, dtype=self.mins[0].dtype)
        for level in range(len(self.mins)):
            sel = k == level
            if not bool(sel.any()):
                continue
            a, b = lo[sel], hi[sel] - (1 << level) + 1
            mn[sel] = torch.minimum(self.mins[level][a], self.mins[level][b])
            mx[sel] = torch.maximum(self.maxs[level][a], self.maxs[level][b])
        return mn, mx


def _getitem(table, index):
    torch = _torch()
    if not isinstance(table, torch.Tensor) or isinstance(table, (Box, Tri)):
        raise Unsupported("indexing bounds")
    items = index if isinstance(index, tuple) else (index,)
    if not items or not isinstance(items[-1], Box) or any(isinstance(i, (Box, Tri)) for i in items[:-1]):
        raise Unsupported("an index other than one position range, last")
    head = tuple(int(i) if isinstance(i, torch.Tensor) and i.dim() == 0 else i for i in items[:-1])
    if any(not isinstance(i, int) for i in head):
        raise Unsupported("a non-scalar leading index")
    values = table.detach().to("cpu")[head] if head else table.detach().to("cpu")
    if values.dim() != 1 or values.is_complex() or values.is_floating_point() and not bool(values.isfinite().all()):
        raise Unsupported("a lookup in a table that is not a 1-d vector")
    box = items[-1]
    if box.lo.is_floating_point() or bool((box.lo < 0).any()) or bool((box.hi >= len(values)).any()):
        raise Unsupported("a lookup outside the table")
    cache = _TABLES.setdefault(id(values.untyped_storage()) ^ hash(head), (values, _RangeTable(values)))
    lo, hi = cache[1].query(box.lo, box.hi)
    if values.dtype == torch.bool:
        return Tri(lo == 1, hi == 1)
    return Box(lo, hi)


_TABLES = {}
_HANDLERS = {
    "add": _add, "radd": lambda a, b: _add(b, a), "sub": _sub, "rsub": lambda a, b: _sub(b, a),
    "mul": _mul, "rmul": lambda a, b: _mul(b, a), "neg": _neg, "negative": _neg, "abs": _abs,
    "floordiv": _floordiv, "floor_divide": _floordiv, "div": _div, "mod": _mod, "remainder": _mod,
    "ge": _ge, "greater_equal": _ge, "le": lambda a, b: _ge(b, a), "less_equal": lambda a, b: _ge(b, a),
    "gt": _gt, "greater": _gt, "lt": lambda a, b: _gt(b, a), "less": lambda a, b: _gt(b, a),
    "eq": _eq, "ne": lambda a, b: _not(_eq(a, b)), "not_equal": lambda a, b: _not(_eq(a, b)),
    "and": lambda a, b: _bitwise(_and, a, b), "rand": lambda a, b: _bitwise(_and, b, a),
    "or": lambda a, b: _bitwise(_or, a, b), "ror": lambda a, b: _bitwise(_or, b, a),
    "xor": lambda a, b: _bitwise(_xor, a, b), "rxor": lambda a, b: _bitwise(_xor, b, a),
    "invert": lambda a: _bitwise(_not, a), "bitwise_not": lambda a: _bitwise(_not, a),
    "bitwise_and": lambda a, b: _bitwise(_and, a, b), "bitwise_or": lambda a, b: _bitwise(_or, a, b),
    "bitwise_xor": lambda a, b: _bitwise(_xor, a, b),
    "logical_and": _and, "logical_or": _or, "logical_not": _not, "logical_xor": _xor,
    "where": _where, "minimum": _minimum, "maximum": _maximum, "min": _minimum, "max": _maximum,
    "clamp": _clamp, "clip": _clamp, "getitem": _getitem, "to": _to,
    "ones_like": _like(1), "zeros_like": _like(0), "full_like": _full_like,
    "long": _box, "int": _box, "bool": _tri,
}


def _operators():
    """Python's operators on bounds: each binary one with its reflected form, from the handlers."""
    for name in ("add", "sub", "mul", "floordiv", "mod", "and", "or", "xor"):
        op = _HANDLERS[name]
        setattr(_Traced, f"__{name}__", lambda self, o, op=op: op(self, o))
        setattr(_Traced, f"__r{name}__", lambda self, o, op=op: op(o, self))
    for name in ("ge", "gt", "le", "lt", "eq", "ne"):
        setattr(_Traced, f"__{name}__", lambda self, o, op=_HANDLERS[name]: op(self, o))
    for name, op in (("neg", _neg), ("abs", _abs), ("invert", _HANDLERS["invert"])):
        setattr(_Traced, f"__{name}__", lambda self, op=op: op(self))


_operators()


def block_size(n):
    """Query and key block size: FlexAttention's 128, larger above n = 262144 (at most 2048 blocks
    a side, so the bounds stay a few million entries)."""
    return max(128, -(-n // 2048))


def classify(mask_mod, n, b, h, bs):
    """`(full, partial)` bool arrays (query block, key block) of a mask_mod, from one run on block
    bounds; raises Unsupported when the run leaves what the bounds model."""
    torch = _torch()
    nb = -(-n // bs)
    starts = torch.arange(nb, dtype=torch.int64) * bs
    ends = torch.clamp(starts + bs - 1, max=n - 1)
    q = Box(starts[:, None], ends[:, None])
    kv = Box(starts[None, :], ends[None, :])
    _TABLES.clear()
    try:
        out = mask_mod(torch.tensor(b), torch.tensor(h), q, kv)
    except Unsupported:
        raise
    except HasseflowError:
        raise
    except Exception as e:  # what the bounds cannot run (an AttributeError on .item(), ...)
        raise Unsupported(f"{type(e).__name__}: {e}") from None
    finally:
        _TABLES.clear()
    if not isinstance(out, Tri):
        raise Unsupported(f"a result of type {type(out).__name__}")
    full, some = torch.broadcast_tensors(out.all, out.any)
    full = full.expand(nb, nb).numpy().astype(bool)
    some = some.expand(nb, nb).numpy().astype(bool)
    return full, some & ~full
