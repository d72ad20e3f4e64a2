"""Turning the user's live objects into what the core reads: row words (dense masks), interval
rows (the structured engine), or a file's bytes. torch is imported only when an input needs it."""

import json
import operator
import os

import numpy as np

from . import _native
from ._native import HasseflowError

MAX_N = _native.MAX_N
# Rows per torch evaluation: memory stays O(n * CHUNK) booleans whatever n is.
CHUNK_CELLS = 1 << 24


def words_of(mask):
    """An (n, n) boolean array as row words: n rows of ceil(n / 64) little-endian u64."""
    n = mask.shape[0]
    width = -(-n // 64) * 64
    if width != n:
        padded = np.zeros((n, width), dtype=bool)
        padded[:, :n] = mask
        mask = padded
    return np.packbits(mask, axis=1, bitorder="little").tobytes()


def mask_of_words(words, n):
    """Row words back into an (n, n) boolean array."""
    per_row = -(-n // 64) * 8
    rows = np.frombuffer(words, dtype=np.uint8).reshape(n, per_row)
    return np.unpackbits(rows, axis=1, bitorder="little")[:, :n].astype(bool)


def as_int(x, what, low=0, high=(1 << 63) - 1):
    """A whole number from an int, a NumPy integer or a 0-d integer tensor (anything with
    `__index__`), in `low..=high`; anything else (a float, a bool, a string, a number too large for
    the core) is a HasseflowError."""
    if isinstance(x, (bool, np.bool_)):
        raise HasseflowError(f"{what} = {x!r}: give a whole number, not a bool")
    try:
        v = int(operator.index(x))
    except TypeError:
        raise HasseflowError(f"{what} = {x!r:.40}: give a whole number") from None
    if v < low:
        raise HasseflowError(f"{what} = {v}: give a whole number of at least {low}")
    if v > high:
        raise HasseflowError(f"{what} = {v}: too large (at most {high})")
    return v


def json_default(x):
    """`json.dumps(default=...)` for the NumPy and torch scalars a config dict may hold."""
    try:
        return int(operator.index(x))
    except TypeError:
        pass
    if isinstance(x, (np.floating, float)) or type(x).__name__ == "Tensor" and getattr(x, "ndim", 1) == 0:
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise HasseflowError(f"config: a value of type {type(x).__name__} ({x!r:.40}) is not JSON")


def _is_torch_tensor(x):
    mod = type(x).__module__
    return mod.startswith("torch") and type(x).__name__ in ("Tensor", "Parameter")


def is_block_mask(x):
    return type(x).__name__ == "BlockMask" and hasattr(x, "kv_num_blocks")


def as_bool_array(x, what="mask"):
    """A tensor or array of 0/1 (bool, integer or float), or an additive float mask (0 and -inf or
    the dtype's finfo.min), as a NumPy bool array; anything else is a HasseflowError naming what is
    wrong."""
    floor = None
    if _is_torch_tensor(x):
        if x.device.type == "meta":
            raise HasseflowError(f"{what}: a tensor on the meta device has no values (materialise it first)")
        if x.layout != _torch().strided:
            if x.layout not in (_torch().sparse_coo, _torch().sparse_csr):
                raise HasseflowError(f"{what}: a tensor with layout {x.layout} (give a dense or sparse mask)")
            x = x.to_dense()
        x = x.detach().to("cpu")
        if x.is_complex():
            raise HasseflowError(f"{what}: dtype {x.dtype} is not bool, integer or float")
        if x.is_floating_point():
            floor = float(_torch().finfo(x.dtype).min)  # Transformers' "masked" value in this dtype
            x = x.double()
        x = x.numpy()
    elif type(x).__module__.startswith("scipy.sparse"):
        x = x.toarray()
    if not isinstance(x, np.ndarray):
        try:
            x = np.asarray(x)
        except Exception as e:  # ragged lists and the like
            raise HasseflowError(f"{what}: cannot be read as an array ({e})") from None
    if x.dtype == bool:
        return x
    if x.dtype.kind not in "biuf":
        raise HasseflowError(f"{what}: dtype {x.dtype} is not bool, integer or float")
    bad = (x != 0) & (x != 1)
    if x.dtype.kind == "f" and bad.any():
        # An additive mask (what Transformers and SDPA take): 0 where attended, -inf or the dtype's
        # most negative value (finfo.min) where not.
        floor = np.finfo(x.dtype).min if floor is None else floor
        blocked = np.isneginf(x) | (x <= floor / 2)
        if blocked.any() and ((x == 0) | blocked).all():
            return x == 0
        bad = ~((x == 0) | blocked) if blocked.any() else bad
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise HasseflowError(f"{what}: entry {where} is {x[where]!r}; an additive mask holds only 0 and -inf "
                             "(or finfo.min), a 0/1 mask only 0 and 1")
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise HasseflowError(f"{what}: entry {where} is {x[where]!r}; a mask holds only 0 and 1 (or bool)")
    return x.astype(bool)


def square(x, what="mask"):
    if x.ndim != 2 or x.shape[0] != x.shape[1]:
        raise HasseflowError(f"{what}: shape {tuple(x.shape)} is not square (n, n)")
    if x.shape[0] == 0:
        raise HasseflowError(f"{what}: n = 0; a mask needs at least one position")
    return x


def _torch():
    try:
        import torch
    except ImportError:  # pragma: no cover - the tests install torch
        raise HasseflowError("a mask_mod or BlockMask needs torch (pip install torch)") from None
    return torch


def _out_of_memory(e):
    """Whether torch (or Python) ran out of memory: MemoryError, or torch's allocator errors."""
    return isinstance(e, MemoryError) or type(e).__name__ == "OutOfMemoryError" or (
        isinstance(e, RuntimeError) and ("can't allocate memory" in str(e) or "out of memory" in str(e)))


def eval_rows(mask_mod, n, b, h, start, stop, kv_start=0, kv_stop=None):
    """mask_mod evaluated by torch's own create_mask on rows start..stop (keys kv_start..kv_stop)."""
    torch = _torch()
    from torch.nn.attention.flex_attention import create_mask

    kv_stop = n if kv_stop is None else kv_stop
    q0, k0 = torch.tensor(start), torch.tensor(kv_start)
    bt, ht = torch.tensor(b), torch.tensor(h)

    def shifted(_b, _h, q, kv):
        return mask_mod(bt, ht, q + q0, kv + k0)

    m = evaluated(lambda: create_mask(shifted, 1, 1, stop - start, kv_stop - kv_start, device="cpu"),
                  "the mask_mod", f"rows {start}..{stop - 1}")
    return m[0, 0].numpy()


def evaluated(run, what, where):
    """`run()` (a create_mask call) as a bool tensor: what it raises, a result that is not bool (as
    FlexAttention refuses it) and torch running out of memory become a HasseflowError naming
    `what` and `where`."""
    torch = _torch()
    try:
        m = run()
    except HasseflowError:
        raise
    except Exception as e:
        if _out_of_memory(e):
            raise HasseflowError(f"out of memory evaluating {where} of {what} (torch: {str(e).splitlines()[0][:80]}); "
                                 "free memory, or give a smaller n") from None
        raise HasseflowError(f"{what} raised on {where}: {type(e).__name__}: {e}") from None
    if m.dtype != torch.bool:
        raise HasseflowError(f"{what} returns {m.dtype}, not torch.bool (FlexAttention refuses it too: "
                             "create_block_mask asserts mask.dtype must be torch.bool); compare, e.g. `(...) != 0`")
    return m


def mask_mod_dense(mask_mod, n, b=0, h=0):
    """The (n, n) mask of a mask_mod at (b, h), evaluated in row chunks."""
    out = np.zeros((n, n), dtype=bool)
    step = max(1, CHUNK_CELLS // max(n, 1))
    for s in range(0, n, step):
        out[s:min(n, s + step)] = eval_rows(mask_mod, n, b, h, s, min(n, s + step))
    return out


def runs_of(block):
    """Per row of a boolean block, its runs of True as (row, lo, hi) arrays (inclusive), row-major."""
    start = block.copy()
    start[:, 1:] &= ~block[:, :-1]
    stop = block.copy()
    stop[:, :-1] &= ~block[:, 1:]
    r, lo = np.nonzero(start)
    _, hi = np.nonzero(stop)
    return r, lo, hi


class RowBuilder:
    """Interval rows in CSR form, row by row, for the structured engine."""

    def __init__(self, n):
        self.n = n
        self.counts = np.zeros(n, dtype=np.uint64)
        self.parts = []

    def add(self, row0, r, lo, hi):
        """Spans (row0 + r, lo, hi), sorted by row then lo; rows must come in order."""
        if len(r) == 0:
            return
        rows = r.astype(np.int64) + row0
        np.add.at(self.counts, rows, 1)
        self.parts.append(np.stack([lo.astype(np.uint32), hi.astype(np.uint32)], axis=1))

    def finish(self):
        offsets = np.zeros(self.n + 1, dtype=np.uint64)
        np.cumsum(self.counts, out=offsets[1:])
        spans = np.concatenate(self.parts) if self.parts else np.zeros((0, 2), dtype=np.uint32)
        return offsets.astype("<u8").tobytes(), np.ascontiguousarray(spans, dtype="<u4").tobytes()


def check_row_intervals(counts, what):
    cap = _native.MAX_ROW_INTERVALS
    if counts.size and counts.max() > cap:
        q = int(np.argmax(counts > cap))
        raise HasseflowError(
            f"{what}: row {q} has {int(counts[q])} intervals; the structured engine takes at most {cap} per row "
            f"(masks up to n = {MAX_N} are analysed densely)")


def mask_mod_rows(mask_mod, n, b=0, h=0):
    """Interval rows of a mask_mod at (b, h), evaluated by torch in row chunks."""
    rb = RowBuilder(n)
    step = max(1, CHUNK_CELLS // max(n, 1))
    for s in range(0, n, step):
        block = eval_rows(mask_mod, n, b, h, s, min(n, s + step))
        r, lo, hi = runs_of(block)
        rb.add(s, r, lo, hi)
    check_row_intervals(rb.counts, "mask_mod")
    return rb.finish()


def pick(size, i, what, dim):
    """Index `i` (b or h) into a dimension of `size` (1: broadcast), refused when out of range."""
    i = as_int(i, what)
    if size != 1 and i >= size:
        raise HasseflowError(f"{what} = {i} is out of range: the {dim} has {size} (0..{size - 1})")
    return 0 if size == 1 else i


def rows_to_dense(n, offsets, spans):
    """Interval rows (CSR bytes) as an (n, n) bool array."""
    off = np.frombuffer(offsets, dtype="<u8").astype(np.int64)
    sp = np.frombuffer(spans, dtype="<u4").reshape(-1, 2).astype(np.int64)
    rows = np.repeat(np.arange(n), np.diff(off))
    step = np.zeros((n, n + 1), dtype=np.int8)  # spans of a row are disjoint: the running sum is 0 or 1
    np.add.at(step, (rows, sp[:, 0]), 1)
    np.add.at(step, (rows, sp[:, 1] + 1), -1)
    return np.cumsum(step, axis=1)[:, :n] > 0


def block_mask_rows(bm, b=0, h=0, capped=True):
    """Interval rows of a FlexAttention BlockMask at its real length: full blocks as whole key
    ranges, partial blocks evaluated by the BlockMask's own mask_mod (torch's create_mask, many
    blocks per call), never the dense n x n mask. `capped`: refuse rows over the structured
    engine's interval limit (off when the rows are made dense)."""
    _torch()
    q_len, kv_len = (int(x) for x in bm.seq_lengths)
    if q_len != kv_len:
        raise HasseflowError(f"BlockMask: {q_len} queries and {kv_len} keys; self-attention masks are square")
    n = q_len
    qb, kb = (int(x) for x in bm.BLOCK_SIZE)
    nqb = -(-n // qb)

    def table(num, idx):
        if num is None:
            return [()] * nqb
        bsel = pick(num.shape[0], b, "b", "BlockMask's batch")
        hsel = pick(num.shape[1], h, "h", "BlockMask's heads")
        num = num[bsel, hsel].to("cpu").numpy()
        idx = idx[bsel, hsel].to("cpu").numpy()
        rows = min(nqb, len(num))
        if (num[:rows] < 0).any() or (num[:rows] > idx.shape[-1]).any():
            raise HasseflowError(f"BlockMask: a block count is outside 0..{idx.shape[-1]}")
        used = np.concatenate([idx[i, :num[i]] for i in range(rows)]) if rows else np.zeros(0, np.int64)
        if (used < 0).any():
            raise HasseflowError(f"BlockMask: a kv index is negative ({int(used.min())}); indices name key blocks "
                                 f"0..{-(-n // kb) - 1}")
        return [sorted(int(j) for j in idx[i, :num[i]] if int(j) * kb < n) for i in range(rows)]

    partial, full = table(bm.kv_num_blocks, bm.kv_indices), table(bm.full_kv_num_blocks, bm.full_kv_indices)
    return n, rows_of_blocks(n, qb, kb, partial, full, bm.mask_mod, b, h, "the BlockMask's mask_mod",
                             "BlockMask" if capped else None)


def rows_of_blocks(n, qb, kb, partial, full, mask_mod, b, h, what="the mask_mod", capped="mask_mod"):
    """Interval rows from a block layout: per query block, the key blocks that are `full` (whole
    key ranges, no cell visited) and `partial` (every cell evaluated by `mask_mod` through torch's
    create_mask, many blocks per call); other blocks are empty. `capped` names the input when
    rows over the structured engine's interval limit are refused."""
    torch = _torch()
    from torch.nn.attention.flex_attention import create_mask

    nqb = -(-n // qb)
    # Every partial block at once (in batches): virtual query p * qb + r is row q0[p] + r,
    # virtual key c is k0[p] + c (clamped inside the sequence; cells past it are dropped).
    pairs = [(i, j) for i in range(len(partial)) for j in partial[i]]
    subs = {}
    bt, ht = torch.tensor(b), torch.tensor(h)
    per_call = max(1, CHUNK_CELLS // (qb * kb))
    for s in range(0, len(pairs), per_call):
        batch = pairs[s:s + per_call]
        q0 = torch.tensor([i * qb for i, _ in batch])
        k0 = torch.tensor([j * kb for _, j in batch])

        def virtual(_b, _h, q, kv, q0=q0, k0=k0):
            p = q // qb
            qq = torch.clamp(q0[p] + q % qb, max=n - 1)
            kk = torch.clamp(k0[p] + kv, max=n - 1)
            return mask_mod(bt, ht, qq, kk)

        m = evaluated(lambda: create_mask(virtual, 1, 1, len(batch) * qb, kb, device="cpu")[0, 0], what,
                      f"{len(batch)} partial blocks")
        m = m.numpy().reshape(len(batch), qb, kb)
        for t, key in enumerate(batch):
            subs[key] = m[t]
    rb = RowBuilder(n)
    for i in range(nqb):
        q0, q1 = i * qb, min(n, (i + 1) * qb)
        rows = q1 - q0
        # Runs of consecutive full blocks are one column each: (first block, last block, full).
        fj = np.asarray(sorted(full[i] if i < len(full) else ()), dtype=np.int64)
        cut = np.flatnonzero(np.diff(fj) != 1) + 1 if len(fj) else np.zeros(0, np.int64)
        runs = [(int(r[0]), int(r[-1]), True) for r in np.split(fj, cut)] if len(fj) else []
        blocks = sorted(runs + [(j, j, False) for j in (partial[i] if i < len(partial) else ())])
        cols, lo, hi = [], [], []
        last = None  # the key block the previous column ended in
        for j, j_last, is_full in blocks:
            k0, k1 = j * kb, min(n, (j_last + 1) * kb)
            if last is not None and j != last + 1:
                cols.append(np.zeros((rows, 1), dtype=bool))  # a gap: runs never cross it
                lo.append(0)
                hi.append(0)
            if is_full:
                cols.append(np.ones((rows, 1), dtype=bool))
                lo.append(k0)
                hi.append(k1 - 1)
            else:
                cols.append(subs[(i, j)][:rows, :k1 - k0])
                lo.extend(range(k0, k1))
                hi.extend(range(k0, k1))
            last = j_last
        if not cols:
            continue
        r, a, z = runs_of(np.concatenate(cols, axis=1))
        lo, hi = np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)
        rb.add(q0, r, lo[a], hi[z])
    if capped:
        check_row_intervals(rb.counts, capped)
    return rb.finish()


def mask_mod_block_rows(mask_mod, n, b=0, h=0):
    """Interval rows of a mask_mod at any n, the way create_block_mask lays it out: blocks proved
    full or empty from one run of the mask_mod on block bounds (`_blocks`), the partial blocks
    evaluated cell by cell by torch. None when the mask_mod does something the bounds do not model
    (the caller then evaluates every cell)."""
    from . import _blocks

    bs = _blocks.block_size(n)
    try:
        full, partial = _blocks.classify(mask_mod, n, b, h, bs)
    except _blocks.Unsupported:
        return None
    split = lambda grid: [np.flatnonzero(row).tolist() for row in grid]  # noqa: E731
    return rows_of_blocks(n, bs, bs, split(partial), split(full), mask_mod, b, h)


def stack_file(layers):
    """A hasseflow JSON file (packed masks) of a per-layer stack: what the CLI reads for it."""
    import base64

    n = layers[0].shape[0]
    heads = []
    for i, m in enumerate(layers):
        if m.shape != (n, n):
            raise HasseflowError(f"stack layer {i}: shape {tuple(m.shape)}, expected ({n}, {n})")
        bits = np.packbits(m.reshape(-1), bitorder="little").tobytes()
        heads.append({"heads": [{"packed": base64.b64encode(bits).decode()}]})
    union = np.logical_or.reduce(np.stack(layers))
    doc = {"format": "hasseflow-mask", "version": 1, "n": n,
           "packed": base64.b64encode(np.packbits(union.reshape(-1), bitorder="little").tobytes()).decode(),
           "stack": {"mode": "once", "layers": heads}}
    return json.dumps(doc).encode()


MAX_INPUT_BYTES = 96 * 1024 * 1024


def read_file(path, limit, what="input"):
    """The bytes of a regular file of at most `limit` bytes; a directory, a device or a pipe
    (`/dev/zero`), or a larger file, is a one-line HasseflowError (it is never read unbounded)."""
    if not os.path.isfile(path):
        kind = "is a directory" if os.path.isdir(path) else "is not a regular file"
        raise HasseflowError(f"{path}: {kind}; give a {what} file")
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise HasseflowError(f"{path}: cannot be read ({e.strerror or e})") from None
    if len(data) > limit:
        raise HasseflowError(f"{path}: {what} is over {limit} bytes, the limit")
    return data


def read_source(x):
    """A path or text: the bytes the CLI would read."""
    if isinstance(x, (bytes, bytearray)):
        return bytes(x)
    if isinstance(x, os.PathLike) or (isinstance(x, str) and "\n" not in x and len(x) < 4096 and os.path.exists(x)):
        return read_file(os.fspath(x), MAX_INPUT_BYTES)
    if isinstance(x, str):
        if "\n" not in x and not x.lstrip().startswith("{"):
            raise HasseflowError(f"{x}: no such file")
        return x.encode()
    raise HasseflowError(f"cannot read a mask from {type(x).__name__}")


def _listed(x, what, of):
    """`x` as an iterable of entries (None: none), refusing a string or a scalar."""
    if x is None:
        return ()
    if isinstance(x, (str, bytes)) or not hasattr(x, "__iter__"):
        raise HasseflowError(f"{what}: give a list of {of}, not {type(x).__name__}")
    return x


def document_lengths(documents, what="documents"):
    """Packed document lengths as whole numbers of at least 1: a float such as 10.5, a bool or a
    zero-length document is refused, naming its entry (`documents[0] = 0`)."""
    out = []
    for i, d in enumerate(_listed(documents, what, "lengths")):
        if isinstance(d, (float, np.floating)):
            if not float(d).is_integer():
                raise HasseflowError(f"{what}[{i}] = {d!r}: give whole numbers")
            d = int(d)
        out.append(as_int(d, f"{what}[{i}]", 1))
    return out


def image_spans(images):
    """`images` as a list of `(start, length)` pairs of non-negative ints; anything else is a
    HasseflowError naming the entry (the spans themselves are checked by the core)."""
    images = _listed(images, "images", "(start, length) pairs")
    spans = []
    for i, span in enumerate(images):
        try:
            start, length = span
            pair = (operator.index(start), operator.index(length))
        except (TypeError, ValueError):
            raise HasseflowError(f"images: entry {i} ({span!r:.40}) is not a (start, length) pair of ints") from None
        if pair[0] < 0 or pair[1] < 0 or pair[0] >= 1 << 64 or pair[1] >= 1 << 64:
            raise HasseflowError(f"images: entry {i} ({span!r:.40}) has a negative or too large number")
        spans.append(pair)
    return spans
