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
from ._app import app
from ._measure import Measurement, measure, redraw
from ._native import HasseflowError
from ._reports import Analysis, Derived, Limit, ModelReport

__all__ = ["analyze", "model", "derive", "measure", "redraw", "gallery", "app", "HasseflowError", "Analysis",
           "ModelReport", "Derived", "Measurement", "Limit", "MAX_N"]
__version__ = _native.VERSION
MAX_N = _native.MAX_N


def analyze(mask, n=None, layers=None, b=0, h=0, labels=None):
    """Analyses a mask: L*, growth, classes, Hasse diagram (the CLI's `analyze --json`).

    `mask` is a `mask_mod(b, h, q_idx, kv_idx)` callable (at `n` positions, batch `b`, head `h`:
    up to n = 8192 evaluated by torch's `create_mask` in row chunks; above, by blocks: full and
    empty blocks proved from one run on block bounds, partial blocks by torch), a FlexAttention
    `BlockMask` (at its own
    length), a boolean tensor or array `(n, n)` (or `(B, H, n, n)`: `[b, h]` is taken), a list of
    per-layer masks (a stack, or a `(L, n, n)` array), a hasseflow JSON file (path, text or dict),
    or any other file the CLI reads (text grid, `.npy`, kernel parameters, mask_mod source).

    Up to n = 8192 the analysis is dense (the full report and the limit as an array); above, or
    with `layers=`, a mask_mod or BlockMask runs on the structured engine (up to 16M positions),
    `layers` copies deep or, without it, at the depth that reaches the limit (up to 64).
    """
    n = None if n is None else _inputs.as_int(n, "n", 1)
    layers = None if layers is None else _inputs.as_int(layers, "layers", 1)
    b, h = _inputs.as_int(b, "b"), _inputs.as_int(h, "h")
    if _inputs.is_block_mask(mask):
        size, (offsets, spans) = _inputs.block_mask_rows(mask, b, h, capped=False)
        if n is not None and n != size:
            raise HasseflowError(f"n = {n}, but the BlockMask has {size} positions")
        if size <= MAX_N and layers is None:
            dense = _inputs.rows_to_dense(size, offsets, spans)
            return _dense(dense, labels)
        _inputs.check_row_intervals(np.diff(np.frombuffer(offsets, dtype="<u8")), "BlockMask")
        return Analysis(json.loads(_native.analyze_rows(size, offsets, spans, layers)), rows=(size, offsets, spans))
    if callable(mask) and not isinstance(mask, type):
        if n is None:
            raise HasseflowError("a mask_mod needs n: analyze(mask_mod, n=...)")
        if n <= MAX_N and layers is None:
            return _dense(_inputs.mask_mod_dense(mask, n, b, h), labels)
        if n > _native.MAX_STRUCTURED_N:
            raise HasseflowError(f"n = {n} is above the structured engine's limit {_native.MAX_STRUCTURED_N}")
        notes = []
        rows = _inputs.mask_mod_block_rows(mask, n, b, h)
        if rows is None:  # something the block bounds do not model: every cell through torch
            notes.append(f"n = {n}: every cell evaluated by torch ({n * n:.2e} cells): the mask_mod does something "
                         "the block bounds do not model (a Python branch on a position, .item(), ...)")
            rows = _inputs.mask_mod_rows(mask, n, b, h)
        return Analysis(json.loads(_native.analyze_rows(n, *rows, layers)), notes=notes, rows=(n, *rows))
    if isinstance(mask, (list, tuple)):
        if not mask:
            raise HasseflowError("an empty stack: give at least one layer")
        layers_ = [_inputs.square(_as_mask(m, n, b, h, f"stack layer {i}"), f"stack layer {i}")
                   for i, m in enumerate(mask)]
        return _file(_inputs.stack_file(layers_), None, b, h, None)
    if isinstance(mask, dict):
        return _file(json.dumps(mask, default=_inputs.json_default).encode(), n, b, h, layers)
    if isinstance(mask, (str, bytes, bytearray, os.PathLike)):
        return _file(_inputs.read_source(mask), n, b, h, layers)
    if getattr(mask, "ndim", None) == 4:
        mask = mask[_inputs.pick(mask.shape[0], b, "b", "mask's batch"), _inputs.pick(mask.shape[1], h, "h", "mask's heads")]
    arr = _inputs.as_bool_array(mask)
    if arr.ndim == 3:
        return analyze(list(arr), n=n, labels=labels)
    arr = _inputs.square(arr)
    if n is not None and n != arr.shape[0]:
        raise HasseflowError(f"n = {n}, but the mask is {arr.shape[0]} x {arr.shape[0]}")
    if layers is not None:
        raise HasseflowError("layers= is for a mask_mod or a BlockMask above the dense engine; a dense mask "
                             "reports every layer up to L*")
    return _dense(arr, labels)


def _as_mask(m, n, b, h, what):
    """One layer of a stack as an (n, n) bool array: a mask_mod (at n), a BlockMask, or a mask."""
    if _inputs.is_block_mask(m):
        size, (offsets, spans) = _inputs.block_mask_rows(m, b, h, capped=False)
        if size > MAX_N:
            raise HasseflowError(f"{what}: a BlockMask of {size} positions; a stack is analysed densely, up to {MAX_N}")
        return _inputs.rows_to_dense(size, offsets, spans)
    if callable(m) and not isinstance(m, type):
        if n is None:
            raise HasseflowError(f"{what}: a mask_mod in a stack needs n=")
        if n > MAX_N:
            raise HasseflowError(f"{what}: n = {n}; a stack is analysed densely, up to {MAX_N}")
        return _inputs.mask_mod_dense(m, n, b, h)
    if getattr(m, "ndim", None) == 4:
        m = m[_inputs.pick(m.shape[0], b, "b", f"{what}'s batch"), _inputs.pick(m.shape[1], h, "h", f"{what}'s heads")]
    return _inputs.as_bool_array(m, what)


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
        # Only a mask_mod's source is analysed on the structured engine: its rows give the pictures.
        source, size = bytes(data).decode("utf-8"), report["n"]
        return Analysis(report, notes=notes,
                        rows=lambda layers, dark: _native.source_pictures(source, size, b, h, layers, dark))
    limit, mask = dense
    return Analysis(report, limit, mask=_inputs.mask_of_words(mask, report["n"]), notes=notes,
                    labels=report.get("labels"))


def model(source, n=None, documents=None, *, images=None, encoder_context=None, rows=(), direction=None,
          max_memory_gib=None, context=None):
    """`hasseflow model --json` on a Transformers `PretrainedConfig`, a model (its `.config`), a
    `config.json` path, a dict, or a gallery name (`hasseflow.gallery()`), at `n` tokens (`context=`
    is the same) with packed `documents` (lengths summing to n), `images` as `(start, length)` pairs
    (each image's tokens read each other both ways, as Gemma 3's `token_type_ids` make them;
    `--images`) and the `rows` to report per layer."""
    if n is None and context is None:
        raise HasseflowError("model: give n (the context length in tokens)")
    if n is not None and context is not None and n != context:
        raise HasseflowError(f"model: n = {n} and context = {context} differ; give one")
    n = _inputs.as_int(context if n is None else n, "n", 1)
    config, gallery, name = _config_of(source)
    docs = _inputs.document_lengths(documents)
    spans = _inputs.image_spans(images)
    enc = None if encoder_context is None else _inputs.as_int(encoder_context, "encoder_context", 1)
    qrows = [_inputs.as_int(q, f"rows[{i}]") for i, q in enumerate(rows)]
    if max_memory_gib is not None and (not isinstance(max_memory_gib, (int, float, np.number))
                                       or not max_memory_gib > 0 or not np.isfinite(max_memory_gib)):
        raise HasseflowError(f"max_memory_gib = {max_memory_gib!r}: give a positive number of GiB")
    max_bytes = None if max_memory_gib is None else int(min(max_memory_gib, 1 << 20) * (1 << 30))
    text = _native.model_run(n, config, gallery, name, enc, docs, qrows, direction, max_bytes, spans)
    report = ModelReport(json.loads(text))
    # For the pictures (R(l) at sampled queries) and the Models view's link.
    report._rerun = lambda queries: json.loads(_native.model_run(
        n, config, gallery, name, enc, docs, [int(q) for q in queries], direction, max_bytes, spans))["rows"]
    report._link = {"n": n, "documents": docs, "images": [list(x) for x in spans],
                    **({"gallery": gallery} if gallery else {"config": config, "name": name}),
                    **({"encoder": enc} if enc is not None else {})}
    return report


# Fields a config states its layer count in (Transformers' names across model types).
LAYER_COUNT_FIELDS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers", "num_decoder_layers",
                      "decoder_layers", "encoder_layers", "num_encoder_layers")


def _check_layer_count(d, where="config"):
    """A hand-written config dict must state its layer count: the core would otherwise take the
    config class's default (32 for Llama), which a dict the user wrote rarely means."""
    subs = [v for k, v in d.items() if isinstance(v, dict) and k in ("text_config", "decoder", "encoder",
                                                                      "language_config", "llm_config")]
    if not any(k in d for k in LAYER_COUNT_FIELDS) and not any(any(k in s for k in LAYER_COUNT_FIELDS) for s in subs):
        raise HasseflowError(f"{where}: no layer count: give num_hidden_layers (or the type's own field: "
                             "n_layer, num_layers); without it the config class's default would be taken")


def _config_of(source):
    """(config text, gallery name, file name) of a model source."""
    conf = getattr(source, "config", None)
    if conf is not None and hasattr(conf, "to_json_string"):
        source = conf
    if hasattr(source, "to_json_string") and hasattr(source, "model_type"):
        return source.to_json_string(use_diff=False), None, f"{source.model_type} config"
    if isinstance(source, dict):
        _check_layer_count(source)
        return json.dumps(source, default=_inputs.json_default), None, "config"
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
    with its options as keywords (`derive("block", n=8, block=2)`, the CLI's `derive` options), or a
    family file (path, text or dict; docs/FAMILY_FORMAT.md). A family's `n` counts tokens; the
    merged mask has `Derived.n` positions, and `Derived.positions_explained` says how one becomes
    the other (streams, mask tokens)."""
    if isinstance(family, str) and family in FAMILIES:
        text = {}
        for k, v in params.items():
            if isinstance(v, (bool, np.bool_)):
                text[k] = "true" if v else "false"
            elif isinstance(v, str):
                text[k] = v
            else:
                text[k] = str(_inputs.as_int(v, k))
        report, mask, design = _native.derive_family(None, None, bool(sparse), family, text)
    else:
        if params:
            raise HasseflowError(f"options {sorted(params)} apply to built-in families only ({', '.join(FAMILIES)})")
        data = json.dumps(family).encode() if isinstance(family, dict) else _inputs.read_source(family)
        report, mask, design = _native.derive_family(None, data, bool(sparse))
    return Derived(json.loads(report), mask, design)


def _family_help():
    """Each built-in family's options with their defaults, from the core's family table."""
    lines = ["", "Built-in families and their options (the core's family table; `n` counts tokens):"]
    for f in json.loads(_native.families()):
        lines.append(f"  {f['name']!r} ({f['title']}):")
        for p in f["params"]:
            kind = "|".join(p["options"]) if p["kind"] == "choice" else p["kind"]
            need = "required" if p["required"] else f"default {p['default']}"
            lines.append(f"      {p['name']}: {kind}, {need}: {p['help']}")
    return "\n".join(lines)


FAMILIES = tuple(f["name"] for f in json.loads(_native.families()))
derive.__doc__ += _family_help()
