"""`hasseflow.measure`: a real model's per-layer reach, measured by forward-mode differentiation,
against what its config (or a mask) says.

    R(l)[q, k] is set  <=>  d hidden_states[l][q] / d inputs_embeds[k] != 0

One forward pass over a batch of n copies of the same random embeddings, copy k carrying a random
tangent at position k only, gives every R(l) at once (`torch.autograd.forward_ad`). The model runs
as a float64 copy in eval mode: float64 zeros are structural, where float32 finite differences miss
cells. Packed documents are given the way Transformers detects them: position ids restarting at 0
at each document.
"""

import copy as _copy
import inspect
import json

import numpy as np

from ._native import HasseflowError
from ._reports import EXTRA, MISSING, REACH, Report, _table
from . import _native


class Measurement(Report):
    """What `measure()` found. `reach[l - 1]` is the measured R(l) (bool, (n, n)); `predicted`
    the same from the config or mask (None without one). Per layer (`table`): measured and
    predicted cells, `missing` (predicted, not measured), `extra` (measured, not predicted) and
    `cross_document` cells (measured across packed documents). `agrees` is True when every layer
    equals its prediction; `cross_document_cells` counts the last layer's."""

    def __init__(self, data, reach, predicted, documents):
        super().__init__(data)
        self.reach = reach
        self.predicted = predicted
        self.documents = documents

    @property
    def table(self):
        return _table(self.json["per_layer"])

    def differing_cells(self, layer=None):
        """(q, k) pairs where measurement and prediction differ at `layer` (default: the first layer
        that differs, else the last)."""
        layer = layer or self._picture_layer()
        if self.predicted is None:
            return np.zeros((0, 2), dtype=np.int64)
        return np.argwhere(self.reach[layer - 1] ^ self.predicted[layer - 1])

    def _picture_layer(self):
        for row in self.json["per_layer"]:
            if row.get("missing") or row.get("extra") or row.get("cross_document"):
                return row["layer"]
        return len(self.reach)

    def picture(self, layer=None, dark=False):
        """The grid of R(layer) as SVG: cells in both, predicted only (missing), measured only
        (extra, or across documents)."""
        layer = layer or self._picture_layer()
        r = self.reach[layer - 1]
        cells = r.astype(np.uint8)
        if self.predicted is not None:
            p = self.predicted[layer - 1]
            cells[p & ~r] = 2
            cells[r & ~p] = 3
        if self.documents:
            doc = np.repeat(np.arange(len(self.documents)), self.documents)
            cells[r & (doc[:, None] != doc[None, :])] = 3
        legend = [(1, "reached (measured)" + (" = predicted" if self.predicted is not None else "")),
                  (2, "predicted, not measured"), (3, "measured, not predicted / across documents")]
        title = f"R({layer}) of {self.json['model']}: measured vs {self.json['predicted_from'] or 'nothing'}"
        return _native.grid_picture(cells.tobytes(), r.shape[0], ["#ffffff", REACH, MISSING, EXTRA], legend, title,
                                    dark)

    def _title(self):
        return f"measured reach of {self.json['model']} at n = {self.json['n']}"

    def _summary(self):
        j = self.json
        verdict = "equals" if j["agrees"] else "differs from"
        what = f"the measured reach {verdict} {j['predicted_from']}" if j["predicted_from"] else "no prediction given"
        leak = f"; {j['cross_document_cells']} cells cross documents at the last layer" if j["documents"] else ""
        return f"{j['layers']} layers: {what}{leak}"

    def _pictures(self):
        return [self.picture()]


def _forward_kwargs(model, n, documents):
    params = inspect.signature(model.forward).parameters
    if "inputs_embeds" not in params:
        raise HasseflowError("measure: the model's forward takes no inputs_embeds")
    kw = {"output_hidden_states": True}
    for k, v in (("use_cache", False), ("return_dict", True)):
        if k in params:
            kw[k] = v
    if documents:
        if "position_ids" not in params:
            raise HasseflowError("measure: documents need a forward that takes position_ids")
        import torch

        pos = torch.cat([torch.arange(d) for d in documents])
        kw["position_ids"] = pos.unsqueeze(0).expand(n, n).contiguous()
    return kw


def _hidden_states(out):
    hs = getattr(out, "hidden_states", None)
    if hs is None and isinstance(out, dict):
        hs = out.get("hidden_states")
    if hs is None:
        raise HasseflowError("measure: the model returned no hidden_states (output_hidden_states=True)")
    return list(hs)


def _embedding_dim(model):
    emb = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    w = getattr(emb, "weight", None)
    if w is not None and w.dim() == 2:
        return int(w.shape[1])
    conf = getattr(model, "config", None)
    for k in ("hidden_size", "d_model", "n_embd", "dim"):
        v = getattr(conf, k, None)
        if isinstance(v, int):
            return v
    raise HasseflowError("measure: cannot tell the model's embedding width")


def measured_reach(model, n, documents=None, seed=0, copy=True):
    """The measured R(1..L) as a bool array (L, n, n)."""
    import torch
    import torch.autograd.forward_ad as fwAD

    kw = _forward_kwargs(model, n, documents)
    m = _copy.deepcopy(model) if copy else model
    m = m.to(torch.float64).eval()
    # Eager attention and experts in every Transformers module (a wrapper's inner model too): the
    # fused kernels (SDPA flash on CPU, grouped_mm) have no forward-mode rule or no float64 kernel.
    for sub in m.modules():
        for setter in ("set_attn_implementation", "set_experts_implementation"):
            if hasattr(sub, setter) and getattr(sub, "config", None) is not None:
                try:
                    getattr(sub, setter)("eager")
                except Exception:
                    pass
    dim = _embedding_dim(m)
    gen = torch.Generator().manual_seed(seed)
    base = torch.randn(1, n, dim, generator=gen, dtype=torch.float64)
    x = base.expand(n, n, dim).contiguous()
    t = torch.zeros(n, n, dim, dtype=torch.float64)
    idx = torch.arange(n)
    t[idx, idx] = torch.randn(n, dim, generator=gen, dtype=torch.float64)
    with torch.no_grad(), fwAD.dual_level():
        try:
            out = m(inputs_embeds=fwAD.make_dual(x, t), **kw)
        except HasseflowError:
            raise
        except Exception as e:
            raise HasseflowError(f"measure: the model's forward raised {type(e).__name__}: {e}") from None
        tangents = [fwAD.unpack_dual(h).tangent for h in _hidden_states(out)]
    reach = []
    for tg in tangents[1:]:
        if tg is None:
            reach.append(np.zeros((n, n), dtype=bool))
            continue
        if tg.dim() < 3 or tg.shape[0] != n or tg.shape[1] != n:
            raise HasseflowError(f"measure: a hidden state of shape {tuple(tg.shape)} is not (batch, {n}, d)")
        # batch row k carries the tangent of position k; the output at q is row q of R.
        reach.append(tg.reshape(n, n, -1).ne(0).any(-1).t().numpy().copy())
    return np.stack(reach) if reach else np.zeros((0, n, n), dtype=bool)


def _predicted_from_config(conf, n, documents):
    from . import model as run_model

    r = run_model(conf, context=n, documents=documents, rows=range(n))
    out = np.zeros((r.json["layers"], n, n), dtype=bool)
    for l in range(len(out)):
        for q, row in r.row_mask(l + 1).items():
            out[l, q] = row
    return out, f"its config ({r.json['pattern']})"


def _predicted_from_mask(mask, n, layers, b, h):
    from . import _inputs

    if _inputs.is_block_mask(mask):
        size, (offsets, spans) = _inputs.block_mask_rows(mask, b, h)
        from . import _rows_to_dense

        dense = _rows_to_dense(size, offsets, spans)
    elif callable(mask):
        dense = _inputs.mask_mod_dense(mask, n, b, h)
    else:
        dense = _inputs.square(_inputs.as_bool_array(mask))
    if dense.shape[0] != n:
        raise HasseflowError(f"measure: the mask has {dense.shape[0]} positions, the measurement {n}")
    text, _ = _native.analyze_words(_inputs.words_of(dense), n, None, True)
    first = json.loads(text)["first_reach"]
    fr = np.array([[-1 if x is None else x for x in row] for row in first])
    out = np.stack([(fr >= 0) & (fr <= l) for l in range(1, layers + 1)])
    return out, "the given mask in every layer"


def measure(model, n, documents=None, *, expected=None, b=0, h=0, seed=0, copy=True):
    """Measures the model's true per-layer reach at `n` positions (packed `documents`: lengths
    summing to n) and compares it with what its config says (`hasseflow.model(model.config, ...)`),
    or with `expected`: a mask_mod, BlockMask or (n, n) mask applied in every layer.

    Returns a `Measurement`: the measured and predicted R(l), and per layer the missing, extra and
    cross-document cells. The model is measured as a float64 copy (`copy=False` converts it in
    place). Encoder-decoder models are not measured (their two inputs need another harness)."""
    import torch  # noqa: F401  (a clear ImportError before any work)

    if not isinstance(n, int) or n < 1:
        raise HasseflowError(f"measure: n = {n!r}: give a positive number of positions")
    if n > 1024:
        raise HasseflowError(f"measure: n = {n} needs an n x n batch; measure at n <= 1024")
    docs = [int(d) for d in documents] if documents else []
    if docs and (sum(docs) != n or min(docs) < 1):
        raise HasseflowError(f"measure: the document lengths sum to {sum(docs)}, but n = {n}")
    conf = getattr(model, "config", None)
    if conf is not None and getattr(conf, "is_encoder_decoder", False):
        raise HasseflowError("measure: encoder-decoder models are not measured (give the encoder or decoder "
                             "module alone)")
    reach = measured_reach(model, n, docs, seed, copy)
    layers = reach.shape[0]
    notes = []
    if expected is not None:
        predicted, source = _predicted_from_mask(expected, n, layers, b, h)
    elif conf is not None and hasattr(conf, "to_json_string"):
        predicted, source = _predicted_from_config(conf, n, docs or None)
        if predicted.shape[0] != layers:
            notes.append(f"the config has {predicted.shape[0]} layers, the model returned {layers} hidden states")
            k = min(layers, predicted.shape[0])
            predicted = predicted[:k]
            reach = reach[:k]
            layers = k
    else:
        predicted, source = None, None
    doc = np.repeat(np.arange(len(docs)), docs) if docs else None
    rows = []
    for l in range(layers):
        r = reach[l]
        row = {"layer": l + 1, "measured": int(r.sum())}
        if predicted is not None:
            p = predicted[l]
            row.update(predicted=int(p.sum()), missing=int((p & ~r).sum()), extra=int((r & ~p).sum()))
        if doc is not None:
            row["cross_document"] = int((r & (doc[:, None] != doc[None, :])).sum())
        rows.append(row)
    agrees = predicted is not None and all(r["missing"] == 0 and r["extra"] == 0 for r in rows)
    data = {
        "model": type(model).__name__ if conf is None else getattr(conf, "model_type", type(model).__name__),
        "n": n, "layers": layers, "documents": docs, "predicted_from": source, "agrees": agrees,
        "cross_document_cells": rows[-1].get("cross_document", 0) if rows else 0,
        "leaks": any(r.get("cross_document", 0) for r in rows), "per_layer": rows, "notes": notes,
    }
    return Measurement(data, reach, predicted, docs)
