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


def _is_torch_tensor(x):
    mod = type(x).__module__
    return mod.startswith("torch") and type(x).__name__ in ("Tensor", "Parameter")


def is_block_mask(x):
    return type(x).__name__ == "BlockMask" and hasattr(x, "kv_num_blocks")


def as_bool_array(x, what="mask"):
    """A tensor or array of 0/1 (bool, integer or float) as a NumPy bool array; anything else is a
    HasseflowError naming what is wrong."""
    if _is_torch_tensor(x):
        x = x.detach().to("cpu")
        if x.is_floating_point() or x.is_complex():
            x = x.double()
        x = x.numpy()
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


def eval_rows(mask_mod, n, b, h, start, stop, kv_start=0, kv_stop=None):
    """mask_mod evaluated by torch's own create_mask on rows start..stop (keys kv_start..kv_stop)."""
    torch = _torch()
    from torch.nn.attention.flex_attention import create_mask

    kv_stop = n if kv_stop is None else kv_stop
    q0, k0 = torch.tensor(start), torch.tensor(kv_start)
    bt, ht = torch.tensor(b), torch.tensor(h)

    def shifted(_b, _h, q, kv):
        return mask_mod(bt, ht, q + q0, kv + k0)

    try:
        m = create_mask(shifted, 1, 1, stop - start, kv_stop - kv_start, device="cpu")
    except HasseflowError:
        raise
    except Exception as e:
        raise HasseflowError(f"the mask_mod raised on rows {start}..{stop - 1}: {type(e).__name__}: {e}") from None
    return m[0, 0].numpy()


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


def block_mask_rows(bm, b=0, h=0):
    """Interval rows of a FlexAttention BlockMask at its real length: full blocks as whole key
    ranges, partial blocks evaluated by the BlockMask's own mask_mod (torch's create_mask, many
    blocks per call), never the dense n x n mask."""
    torch = _torch()
    from torch.nn.attention.flex_attention import create_mask

    q_len, kv_len = (int(x) for x in bm.seq_lengths)
    if q_len != kv_len:
        raise HasseflowError(f"BlockMask: {q_len} queries and {kv_len} keys; self-attention masks are square")
    n = q_len
    qb, kb = (int(x) for x in bm.BLOCK_SIZE)
    nqb = -(-n // qb)

    def table(num, idx):
        if num is None:
            return [()] * nqb
        bsel = 0 if num.shape[0] == 1 else b
        hsel = 0 if num.shape[1] == 1 else h
        num = num[bsel, hsel].to("cpu").numpy()
        idx = idx[bsel, hsel].to("cpu").numpy()
        return [sorted(int(j) for j in idx[i, :num[i]] if int(j) * kb < n) for i in range(min(nqb, len(num)))]

    partial, full = table(bm.kv_num_blocks, bm.kv_indices), table(bm.full_kv_num_blocks, bm.full_kv_indices)
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
            return bm.mask_mod(bt, ht, qq, kk)

        try:
            m = create_mask(virtual, 1, 1, len(batch) * qb, kb, device="cpu")[0, 0].numpy()
        except Exception as e:
            raise HasseflowError(f"the BlockMask's mask_mod raised: {type(e).__name__}: {e}") from None
        m = m.reshape(len(batch), qb, kb)
        for t, key in enumerate(batch):
            subs[key] = m[t]
    rb = RowBuilder(n)
    for i in range(nqb):
        q0, q1 = i * qb, min(n, (i + 1) * qb)
        rows = q1 - q0
        blocks = sorted([(j, True) for j in (full[i] if i < len(full) else ())]
                        + [(j, False) for j in (partial[i] if i < len(partial) else ())])
        cols, lo, hi = [], [], []
        last = None  # the key block the previous column ended in
        for j, is_full in blocks:
            k0, k1 = j * kb, min(n, (j + 1) * kb)
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
            last = j
        if not cols:
            continue
        r, a, z = runs_of(np.concatenate(cols, axis=1))
        lo, hi = np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)
        rb.add(q0, r, lo[a], hi[z])
    check_row_intervals(rb.counts, "BlockMask")
    return n, rb.finish()


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
        kind = "a directory" if os.path.isdir(path) else "not a regular file"
        raise HasseflowError(f"{path}: {kind}; give a {what} file")
    with open(path, "rb") as f:
        data = f.read(limit + 1)
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


def image_spans(images):
    """`images` as a list of `(start, length)` pairs of non-negative ints; anything else is a
    HasseflowError naming the entry (the spans themselves are checked by the core)."""
    if images is None:
        return []
    if isinstance(images, (str, bytes)) or not hasattr(images, "__iter__"):
        raise HasseflowError(f"images: give a list of (start, length) pairs, not {type(images).__name__}")
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
