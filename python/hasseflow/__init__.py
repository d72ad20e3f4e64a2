"""hasseflow: what an attention mask does to information flow across layers, for the objects you
already have in Python: a `mask_mod`, a FlexAttention `BlockMask`, a boolean tensor or array, a
per-layer stack, a hasseflow JSON file, a Transformers config or model.

    import hasseflow
    r = hasseflow.analyze(lambda b, h, q, kv: q >= kv, n=1024)
    r.L_star, r.growth[:4]                              # the CLI's `depth` and `growth`
    m = hasseflow.model("mistral-7b-v0.1", context=131072)
    m.full_at, m.table                                  # `hasseflow model --json`, per layer
    d = hasseflow.derive("block", n=8, block=2)         # a mask_mod and .block_mask(device)
    hasseflow.measure(my_model, n=32, documents=[16, 16]).cross_document_cells

Every computation is the Rust core's (the same as the CLI's and the web app's); see docs/PYTHON.md.
"""

import json
import os

import numpy as np

from . import _inputs, _native
from ._measure import Measurement, measure
from ._native import HasseflowError
from ._reports import Analysis, Derived, ModelReport

__all__ = ["analyze", "model", "derive", "measure", "gallery", "HasseflowError", "Analysis", "ModelReport",
           "Derived", "Measurement", "MAX_N"]
__version__ = _native.VERSION
MAX_N = _native.MAX_N
FAMILIES = ("autoregressive", "block", "butterfly", "mae")
# Most cells torch evaluates for one callable (n = 32768: about 20 s on 2 cores). Above, the
# callable's source is read by the core's mask_mod reader (interval rows, any n up to 16M).
CALLABLE_MAX_CELLS = 1 << 30


def analyze(mask, n=None, layers=None, b=0, h=0, labels=None):
    """Analyses a mask: L*, growth, classes, Hasse diagram (the CLI's `analyze --json`).

    `mask` is a `mask_mod(b, h, q_idx, kv_idx)` callable (evaluated by torch's `create_mask` in
    row chunks, at `n` positions, batch `b`, head `h`), a FlexAttention `BlockMask` (at its own
    length), a boolean tensor or array `(n, n)` (or `(B, H, n, n)`: `[b, h]` is taken), a list of
    per-layer masks (a stack, or a `(L, n, n)` array), a hasseflow JSON file (path, text or dict),
    or any other file the CLI reads (text grid, `.npy`, kernel parameters, mask_mod source).

    Up to n = 8192 the analysis is dense (the full report and the limit as an array); above, or
    with `layers=`, a mask_mod or BlockMask runs on the structured engine (up to 16M positions),
    `layers` copies deep or, without it, at the depth that reaches the limit (up to 64).
    """
    if n is not None and (not isinstance(n, (int, np.integer)) or n < 1):
        raise HasseflowError(f"n = {n!r}: give a positive number of positions")
    if _inputs.is_block_mask(mask):
        size, (offsets, spans) = _inputs.block_mask_rows(mask, b, h)
        if n is not None and n != size:
            raise HasseflowError(f"n = {n}, but the BlockMask has {size} positions")
        if size <= MAX_N and layers is None:
            dense = _rows_to_dense(size, offsets, spans)
            return _dense(dense, labels)
        return Analysis(json.loads(_native.analyze_rows(size, offsets, spans, layers)))
    if callable(mask) and not isinstance(mask, type):
        if n is None:
            raise HasseflowError("a mask_mod needs n: analyze(mask_mod, n=...)")
        if n <= MAX_N and layers is None:
            return _dense(_inputs.mask_mod_dense(mask, n, b, h), labels)
        if n > _native.MAX_STRUCTURED_N:
            raise HasseflowError(f"n = {n} is above the structured engine's limit {_native.MAX_STRUCTURED_N}")
        if n * n > CALLABLE_MAX_CELLS:
            return _from_source(mask, n, b, h, layers)
        offsets, spans = _inputs.mask_mod_rows(mask, n, b, h)
        return Analysis(json.loads(_native.analyze_rows(n, offsets, spans, layers)))
    if isinstance(mask, (list, tuple)):
        if not mask:
            raise HasseflowError("an empty stack: give at least one layer")
        layers_ = [_inputs.square(_as_mask(m, n, b, h, f"stack layer {i}"), f"stack layer {i}")
                   for i, m in enumerate(mask)]
        return _file(_inputs.stack_file(layers_), None, b, h, None)
    if isinstance(mask, dict):
        return _file(json.dumps(mask).encode(), n, b, h, layers)
    if isinstance(mask, (str, bytes, bytearray, os.PathLike)):
        return _file(_inputs.read_source(mask), n, b, h, layers)
    arr = _inputs.as_bool_array(mask)
    if arr.ndim == 4:
        arr = arr[b if arr.shape[0] > 1 else 0, h if arr.shape[1] > 1 else 0]
    if arr.ndim == 3:
        return analyze(list(arr), n=n, labels=labels)
    arr = _inputs.square(arr)
    if n is not None and n != arr.shape[0]:
        raise HasseflowError(f"n = {n}, but the mask is {arr.shape[0]} x {arr.shape[0]}")
    if layers is not None:
        raise HasseflowError("layers= is for a mask_mod or a BlockMask above the dense engine; a dense mask "
                             "reports every layer up to L*")
    return _dense(arr, labels)


def _from_source(mask_mod, n, b, h, layers):
    """A callable too long for torch to evaluate cell by cell: its source text, read by the core
    (exact, on interval rows), or a message saying what to give instead."""
    import inspect
    import textwrap

    advice = (f"a mask_mod callable at n = {n} is {n * n:.2e} cells for torch to evaluate (the limit is "
              f"{CALLABLE_MAX_CELLS:.2e}); give its BlockMask, or its source file, for the structured engine")
    try:
        source = textwrap.dedent(inspect.getsource(mask_mod))
    except (OSError, TypeError):
        raise HasseflowError(f"{advice} (its source is not available)") from None
    try:
        text, _, notes = _native.analyze_file(source.encode(), n, b, h, layers)
    except HasseflowError as e:
        raise HasseflowError(f"{advice} (its source is not read: {e})") from None
    notes = [f"n = {n}: evaluated from the source of `{getattr(mask_mod, '__name__', 'mask_mod')}` by hasseflow's "
             f"mask_mod reader (torch would evaluate {n * n:.2e} cells)", *notes]
    return Analysis(json.loads(text), notes=notes)


def _as_mask(m, n, b, h, what):
    if callable(m) and not isinstance(m, type):
        if n is None:
            raise HasseflowError(f"{what}: a mask_mod in a stack needs n=")
        return _inputs.mask_mod_dense(m, n, b, h)
    arr = _inputs.as_bool_array(m, what)
    return arr


def _rows_to_dense(n, offsets, spans):
    off = np.frombuffer(offsets, dtype="<u8").astype(np.int64)
    sp = np.frombuffer(spans, dtype="<u4").reshape(-1, 2).astype(np.int64)
    out = np.zeros((n, n), dtype=bool)
    rows = np.repeat(np.arange(n), np.diff(off))
    for (lo, hi), q in zip(sp, rows):
        out[q, lo:hi + 1] = True
    return out


def _dense(arr, labels=None):
    n = arr.shape[0]
    if n > MAX_N:
        raise HasseflowError(f"mask size n = {n} is out of range 1..={MAX_N} for a dense mask "
                             "(give a mask_mod or a BlockMask for the structured engine)")
    if labels is not None:
        labels = [str(x) for x in labels]
    data, limit = _native.analyze_words(_inputs.words_of(arr), n, labels)
    return Analysis(json.loads(data), limit, mask=arr, labels=labels)


def _file(data, n, b, h, layers):
    text, dense, notes = _native.analyze_file(data, n, b, h, layers)
    report = json.loads(text)
    if notes:
        import warnings

        for note in notes:
            warnings.warn(note, stacklevel=3)
    if dense is None:
        return Analysis(report, notes=notes)
    limit, mask = dense
    return Analysis(report, limit, mask=_inputs.mask_of_words(mask, report["n"]), notes=notes,
                    labels=report.get("labels"))


def model(source, context, documents=None, *, images=None, encoder_context=None, rows=(), direction=None,
          max_memory_gib=None):
    """`hasseflow model --json` on a Transformers `PretrainedConfig`, a model (its `.config`), a
    `config.json` path, a dict, or a gallery name (`hasseflow.gallery()`), at `context` tokens with
    packed `documents` (lengths summing to the context), `images` as `(start, length)` pairs (each
    image's tokens read each other both ways, as Gemma 3's `token_type_ids` make them; `--images`)
    and the `rows` to report per layer."""
    config, gallery, name = _config_of(source)
    docs = [] if documents is None else [int(d) for d in documents]
    spans = _inputs.image_spans(images)
    max_bytes = None if max_memory_gib is None else int(max_memory_gib * (1 << 30))
    text = _native.model_run(int(context), config, gallery, name, encoder_context, docs, [int(q) for q in rows],
                             direction, max_bytes, spans)
    return ModelReport(json.loads(text))


def _config_of(source):
    """(config text, gallery name, file name) of a model source."""
    conf = getattr(source, "config", None)
    if conf is not None and hasattr(conf, "to_json_string"):
        source = conf
    if hasattr(source, "to_json_string") and hasattr(source, "model_type"):
        return source.to_json_string(use_diff=False), None, f"{source.model_type} config"
    if isinstance(source, dict):
        return json.dumps(source), None, "config"
    if isinstance(source, os.PathLike) or (isinstance(source, str) and os.path.exists(source)
                                           and not os.path.isdir(source)):
        path = os.fspath(source)
        if os.path.isdir(path):
            path = os.path.join(path, "config.json")
        data = _inputs.read_file(path, 4 * 1024 * 1024, "config.json")
        return data.decode("utf-8", errors="replace"), None, os.path.basename(path)
    if isinstance(source, str) and os.path.isdir(source):
        return _config_of(os.path.join(source, "config.json"))
    if isinstance(source, str):
        return None, source, source
    raise HasseflowError(f"model: cannot read a config from {type(source).__name__} (give a PretrainedConfig, a "
                         "model, a config.json path, a dict or a gallery name)")


def gallery():
    """The gallery of real models (`hasseflow model --list --json`)."""
    return json.loads(_native.gallery_list())


def derive(family, *, sparse=False, **params):
    """Derives the minimal merged training mask of a task family (THEORY §5-6): a built-in family
    (`"autoregressive"`, `"block"`, `"butterfly"`, `"mae"`) with its options as keywords
    (`derive("block", n=8, block=2)`, the CLI's `derive ... --json` fields), or a family file
    (path, text or dict; docs/FAMILY_FORMAT.md)."""
    if isinstance(family, str) and family in FAMILIES:
        builtin = json.dumps({"family": family, **params})
        report, mask, design = _native.derive_family(builtin, None, sparse)
    else:
        if params:
            raise HasseflowError(f"options {sorted(params)} apply to built-in families only ({', '.join(FAMILIES)})")
        data = json.dumps(family).encode() if isinstance(family, dict) else _inputs.read_source(family)
        report, mask, design = _native.derive_family(None, data, sparse)
    return Derived(json.loads(report), mask, design)
