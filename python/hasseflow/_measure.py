"""`hasseflow.measure`: a real model's per-layer reach, measured on the model as it runs, against
what its config (or a mask) says.

    R(l)[q, k] is set  <=>  the output at q after layer l depends on the input embedding at k

A *probe* is a set of input positions. One pass puts a change on a probe's positions and reads
which outputs moved at every layer; a batch carries several probes, one per batch row. Two modes
read "moved":
- **exact**: forward-mode derivatives (`torch.autograd.forward_ad`): a random tangent on the probe,
  an output moved when its tangent is nonzero. Structural zeros stay exactly zero.
- **difference**: the forward runs on the unchanged input (the reference) and on inputs whose probe
  positions are replaced by other random vectors; an output moved when it is not bit-identical to the
  reference. Any attention implementation runs this way (SDPA, flex, flash, custom kernels). The
  reference runs at the batch size of the probes it is compared with (kernels may round one row
  differently from several), and a re-run of it measures the kernel's noise floor first.

Probes:
- **columns**: one position each; the moved outputs are column k of every R(l), compared exactly
  with the prediction's column.
- **groups**: every position of a group of documents (or any partition). Groups coded by the bits of
  the document index, and their complements, test every ordered pair of D documents in
  2 ceil(log2 D) probes. An output outside the group's predicted reach that moves is a proven leak;
  the first is narrowed to one (layer, q, k) by bisection.
Up to `FULL_MAX_N` positions every column is measured (the whole R(l)); above, chosen columns and the
groups. The model is measured in place: its dtype, its device(s), its attention implementation, under
`no_grad`, in eval mode (restored afterwards). Nothing about the model is switched.
"""

import inspect
import json
import math
import operator

import numpy as np

from ._native import HasseflowError
from ._reports import EXTRA, MISSING, REACH, Report, _table
from . import _native

# Up to this n, every column is measured (the whole R(l) of every layer).
FULL_MAX_N = 1024
# Auto columns beyond the structural ones (chosen at random with the seed).
RANDOM_COLUMNS = 4
# Most structural columns chosen automatically.
MAX_AUTO_COLUMNS = 12
# Default memory for one batch of probes (activations, eager scores, tangents), in bytes.
BATCH_BYTES = 1 << 30
# Difference mode: a change of at most this many units in the last place counts as rounding level.
ROUNDING_ULPS = 64
MODES = ("auto", "exact", "difference")
PACKINGS = ("position_ids", "varlen", "mask")


def _as_int(x, what):
    try:
        v = operator.index(x)
    except TypeError:
        raise HasseflowError(f"measure: {what} = {x!r} is not an integer") from None
    return int(v)


class Measurement(Report):
    """What `measure()` found.

    `agrees`: every measured cell equals the prediction (`predicted_from`); `leaks`: a measured cell
    crosses documents or lies outside the prediction; `first_leak`: None or `(layer, q, k)`, the first
    such cell (lowest layer, then q, then k); `passes`: what was run (probes, forward calls, mode).
    `per_layer` (also `table`): per layer, measured / predicted / missing / extra / cross-document
    cells over what was measured, and how far back the output reads (`back`, measured and predicted).
    With every column measured (n <= 1024 by default), `reach[l - 1]` is the measured R(l) (bool,
    (n, n)) and `predicted` the same from the prediction; with probes, `columns` and
    `column_reach[l - 1]` ((len(columns), n): which outputs read each column)."""

    def __init__(self, data, reach=None, predicted=None, documents=(), column_reach=None, column_predicted=None):
        super().__init__(data)
        self.reach = reach
        self.predicted = predicted
        self.documents = list(documents)
        self.column_reach = column_reach
        self.column_predicted = column_predicted

    @property
    def n(self):
        return self.json["n"]

    @property
    def per_layer(self):
        """Per layer l >= 1: `layer`, `cells` (measured cells of R(l) over the measured columns),
        `coverage` (their share of the last layer's), then `measured`, `predicted`, `missing`,
        `extra`, `cross_document`, `back`, ...; a DataFrame with pandas, else a list of dicts."""
        last = max(1, self.growth[-1])
        return _table([{"layer": r["layer"], "cells": r["measured"], "coverage": r["measured"] / last, **r}
                       for r in self.json["per_layer"]])

    @property
    def first_leak(self):
        f = self.json["first_leak"]
        return None if f is None else tuple(f)

    @property
    def growth(self):
        """`growth[l]`: measured cells of R(l) over the measured columns, from l = 0 (the identity:
        one cell per measured column) to the model's last layer."""
        return [len(self.json["columns"] or ())] + [row["measured"] for row in self.json["per_layer"]]

    @property
    def full_at(self):
        """The first layer from which the measured reach stops growing up to the last layer; None
        when it still grows at the last layer (the model is too shallow for its limit)."""
        g = self.growth
        if len(g) < 2 or g[-1] != g[-2]:
            return None
        at = len(g) - 1
        while at > 1 and g[at - 1] == g[-1]:
            at -= 1
        return at

    @property
    def L_star(self):
        """`full_at`: the measured L*."""
        return self.full_at

    def differing_cells(self, layer=None):
        """(q, k) pairs where measurement and prediction differ at `layer` (default: the first layer
        that differs, else the last), over the measured columns."""
        layer = layer or self._picture_layer()
        if self.column_predicted is None:
            return np.zeros((0, 2), dtype=np.int64)
        r, p = self.column_reach[layer - 1], self.column_predicted[layer - 1]
        ci, q = np.nonzero(r ^ p)
        cols = np.asarray(self.json["columns"], dtype=np.int64)
        return np.stack([q, cols[ci]], axis=1) if len(q) else np.zeros((0, 2), dtype=np.int64)

    def _picture_layer(self):
        for row in self.json["per_layer"]:
            if row.get("missing") or row.get("extra") or row.get("cross_document"):
                return row["layer"]
        return len(self.json["per_layer"])

    def _grid_svg(self, layer=None, dark=False):
        """The measured columns of R(layer) as a grid (SVG): reached as predicted, predicted but not
        measured (missing), measured but not predicted or across documents (extra). With every
        column measured this is the whole R(layer); otherwise one grid column per measured column,
        rows binned to at most 512. `picture(layer)` shows it."""
        layer = layer or self._picture_layer()
        r = self.column_reach[layer - 1]  # (C, n)
        cells = r.astype(np.uint8)
        if self.column_predicted is not None:
            p = self.column_predicted[layer - 1]
            cells[p & ~r] = 2
            cells[r & ~p] = 3
        if self.documents:
            doc = np.repeat(np.arange(len(self.documents)), self.documents)
            cols = np.asarray(self.json["columns"])
            cells[r & (doc[cols][:, None] != doc[None, :])] = 3
        grid = cells.T  # rows q, one column per measured column
        n = grid.shape[0]
        if grid.shape[1] != n:  # probes: bin the rows, keep the worst cell of each bin
            bins = min(n, 512)
            edges = np.linspace(0, n, bins + 1).astype(np.int64)
            grid = np.maximum.reduceat(grid, edges[:-1], axis=0)
            side = max(bins, grid.shape[1])
            square = np.zeros((side, side), dtype=np.uint8)
            width = side // grid.shape[1]
            for j in range(grid.shape[1]):
                square[:bins, j * width:(j + 1) * width] = grid[:, j:j + 1]
            grid = square
        legend = [(1, "reached (measured)" + (" = predicted" if self.column_predicted is not None else "")),
                  (2, "predicted, not measured"), (3, "measured, not predicted / across documents")]
        what = "R" if self.json["columns_measured"] == "all" else f"{len(self.json['columns'])} columns of R"
        source = (self.json["predicted_from"] or "nothing").split(" (")[0]
        title = f"{what}({layer}) of {self.json['model']}, measured vs {source}"
        return _native.grid_picture(np.ascontiguousarray(grid).tobytes(), grid.shape[0],
                                    ["#ffffff", REACH, MISSING, EXTRA], legend, title, dark)

    def _title(self):
        return f"measured reach of {self.json['model']} at n = {self.json['n']}"

    def _summary(self):
        j = self.json
        verdict = "equals" if j["agrees"] else "differs from"
        what = f"the measured reach {verdict} {j['predicted_from']}" if j["predicted_from"] else "no prediction given"
        likely = next((note for note in j["notes"] if note.startswith("missing cells")), None)
        if not j["agrees"] and likely:
            what += f" ({likely})"
        leak = f"; first leak at layer {j['first_leak'][0]}, q = {j['first_leak'][1]}, k = {j['first_leak'][2]}" \
            if j["first_leak"] else "; no leak found"
        p = j["passes"]
        return f"{j['layers']} layers, {p['mode']} mode, {p['probes']} probes: {what}{leak}"

    def _figures(self, layer, dark):
        layer = layer or self._picture_layer()
        return [(f"measured R({layer}) against the prediction", self._grid_svg(layer, dark))], []

    def app_link(self, base=None, layer=None):
        """The Models view's link: the measured model's config at this context and documents."""
        from . import _app

        link = self.__dict__.get("_link")
        if link is None:
            raise HasseflowError("app_link: the measured model has no Transformers config to link to")
        if layer is not None:
            link = {**link, "layer": int(layer)}
        return _app.base_url(base) + "#" + _native.model_fragment(json.dumps(link))


# --- the model's inputs -----------------------------------------------------------------------------

def _input_spec(model):
    """(width, dtype, device) of the model's input embeddings."""
    emb = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    w = getattr(emb, "weight", None)
    if w is not None and getattr(w, "dim", lambda: 0)() == 2:
        if w.device.type == "meta":
            raise HasseflowError("measure: the model's weights are on the meta device (load them, e.g. "
                                 "from_pretrained without device_map='meta', before measuring)")
        return int(w.shape[1]), w.dtype, w.device, float(w.detach().float().std()) if w.numel() > 1 else 1.0
    conf = getattr(model, "config", None)
    import torch

    param = next(iter(model.parameters()), None)
    if param is not None and param.device.type == "meta":
        raise HasseflowError("measure: the model's weights are on the meta device (load them before measuring)")
    dtype = param.dtype if param is not None and param.is_floating_point() else torch.float32
    device = param.device if param is not None else torch.device("cpu")
    for k in ("hidden_size", "d_model", "n_embd", "dim"):
        v = getattr(conf, k, None)
        if isinstance(v, int):
            return v, dtype, device, 1.0
    raise HasseflowError("measure: cannot tell the model's embedding width (no get_input_embeddings, no "
                         "config.hidden_size)")


def _forward_params(model):
    """The parameters of the model's forward; it must take inputs_embeds by name."""
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        params = {}
    if "inputs_embeds" not in params:
        raise HasseflowError("measure: the model's forward takes no inputs_embeds (measure needs to set the input "
                             "embeddings)")
    return params


def _forward_kwargs(params, n, docs, packing, attention_mask, images, device):
    """The keyword arguments of every pass except inputs_embeds (batch dimension 1, expanded per pass)."""
    import torch

    takes_kwargs = any(p.kind == p.VAR_KEYWORD for p in params.values())

    def takes(name):
        return name in params or takes_kwargs

    kw = {"output_hidden_states": True}
    for k, v in (("use_cache", False), ("return_dict", True)):
        if k in params:
            kw[k] = v
    batched = {}
    if docs:
        pos = torch.cat([torch.arange(d) for d in docs]).unsqueeze(0).to(device)
        if packing in ("position_ids", "varlen"):
            if not takes("position_ids"):
                raise HasseflowError("measure: documents need a forward that takes position_ids")
            batched["position_ids"] = pos
        if packing == "varlen":
            if not takes_kwargs and "cu_seq_lens_q" not in params:
                raise HasseflowError("measure: packing='varlen' needs a forward that takes the flash-attention keyword "
                                     "arguments (cu_seq_lens_q/k, max_length_q/k)")
            cu = torch.tensor([0] + list(np.cumsum(docs)), dtype=torch.int32, device=device)
            kw.update(cu_seq_lens_q=cu, cu_seq_lens_k=cu, max_length_q=max(docs), max_length_k=max(docs))
    if packing == "mask" and docs:
        if attention_mask is not None:
            raise HasseflowError("measure: packing='mask' builds the 4-D mask itself; give attention_mask= or "
                                 "packing='mask', not both")
    if attention_mask is not None:
        am = torch.as_tensor(attention_mask)
        if am.dim() == 1:
            am = am.unsqueeze(0)
        if am.dim() == 2:
            if tuple(am.shape) != (1, n):
                raise HasseflowError(f"measure: attention_mask has shape {tuple(am.shape)}; give (n,) or (1, n) "
                                     f"with n = {n}")
        elif am.dim() == 4:
            if am.shape[0] != 1 or am.shape[-2:] != (n, n):
                raise HasseflowError(f"measure: a 4-D attention_mask has shape {tuple(am.shape)}; give (1, 1 or "
                                     f"heads, {n}, {n})")
        else:
            raise HasseflowError(f"measure: attention_mask has {am.dim()} dimensions; give (n,), (1, n) or "
                                 "(1, h, n, n)")
        if not takes("attention_mask"):
            raise HasseflowError("measure: the model's forward takes no attention_mask")
        batched["attention_mask"] = am.to(device)
    if images:
        if not takes("token_type_ids"):
            raise HasseflowError("measure: images need a forward that takes token_type_ids (image tokens marked 1)")
        tt = torch.zeros(1, n, dtype=torch.long, device=device)
        for start, length in images:
            tt[0, start:start + length] = 1
        batched["token_type_ids"] = tt
    return kw, batched


def _four_d_mask(n, docs, causal, dtype, device):
    """A packed 4-D additive mask as collators build it: 0 where q reads k (same document, and k <= q
    for a decoder), the dtype's minimum elsewhere."""
    import torch

    if n * n * torch.finfo(dtype).bits // 8 > (1 << 31):
        raise HasseflowError(f"measure: packing='mask' at n = {n} needs a {n}x{n} mask over 2 GiB; use "
                             "packing='position_ids' or 'varlen'")
    doc = torch.repeat_interleave(torch.arange(len(docs)), torch.tensor(docs)).to(device)
    allowed = doc[:, None] == doc[None, :]
    if causal:
        allowed &= torch.ones(n, n, dtype=torch.bool, device=device).tril()
    m = torch.zeros(n, n, dtype=dtype, device=device)
    m.masked_fill_(~allowed, torch.finfo(dtype).min)
    return m[None, None]


def _hidden_states(out):
    hs = getattr(out, "hidden_states", None)
    if hs is None and isinstance(out, dict):
        hs = out.get("hidden_states")
    if hs is None and isinstance(out, (tuple, list)) and len(out) > 1 and isinstance(out[-1], (tuple, list)):
        hs = out[-1]
    if hs is None:
        raise HasseflowError("measure: the model returned no hidden_states (its forward must honour "
                             "output_hidden_states=True)")
    return list(hs)


class _Runner:
    """Runs probes through the model: `moved(probes)` is a bool array (len(probes), L, n): which outputs
    moved at each layer when each probe's positions changed."""

    def __init__(self, model, n, kw, batched, mode, seed, batch, spec):
        import torch

        self.torch = torch
        self.model, self.n, self.kw, self.batched = model, n, kw, batched
        self.mode = mode
        self.width, self.dtype, self.device, scale = spec
        self.gen = torch.Generator().manual_seed(seed)
        self.scale = scale if math.isfinite(scale) and scale > 0 else 1.0
        self.base = self._random((1, n, self.width))
        self.batch = batch
        self.probes = 0
        self.forwards = 0
        # Difference mode: the unperturbed pass at each batch size used, with its noise floor.
        self.references = {}
        self.noise = None  # the largest noise floor of those (largest re-run difference; 0 = bit-identical)
        self.notes = []

    def _random(self, shape):
        t = self.torch.randn(*shape, generator=self.gen, dtype=self.torch.float32) * self.scale
        return t.to(dtype=self.dtype, device=self.device)

    def _forward(self, x, dual_tangent=None):
        b = x.shape[0]
        kw = dict(self.kw)
        for k, v in self.batched.items():
            kw[k] = v.expand(b, *v.shape[1:])
        if dual_tangent is not None:
            import torch.autograd.forward_ad as fwAD

            with fwAD.dual_level():
                out = self.model(inputs_embeds=fwAD.make_dual(x, dual_tangent), **kw)
                hs = _hidden_states(out)
                res = [None if h is None else fwAD.unpack_dual(h).tangent for h in hs[1:]]
        else:
            out = self.model(inputs_embeds=x, **kw)
            res = [h for h in _hidden_states(out)[1:]]
        self.forwards += 1
        for h in res:
            if h is not None and (h.dim() < 3 or h.shape[0] != b or h.shape[1] != self.n):
                raise HasseflowError(f"measure: a hidden state of shape {tuple(h.shape)} is not (batch, {self.n}, d)")
        return res

    def _call(self, fn):
        try:
            return fn()
        except HasseflowError:
            raise
        except NotImplementedError as e:
            if self.mode == "exact" and "forward AD" in str(e):
                raise _NoForwardAD(str(e).split("\n")[0]) from None
            raise HasseflowError(f"measure: the model's forward raised NotImplementedError: "
                                 f"{str(e).splitlines()[0] if str(e) else ''}") from None
        except Exception as e:
            msg = str(e).splitlines()[0] if str(e) else ""
            raise HasseflowError(f"measure: the model's forward raised {type(e).__name__}: {msg[:300]}") from None

    def prepare(self):
        """The reference pass at the full batch size (difference mode), with its noise floor."""
        if self.mode == "difference":
            self._reference(self.batch)

    def _reference(self, b):
        """The unperturbed outputs at batch size b: row 0 of a pass over b copies of the input, and
        the noise floor at that size, the largest difference from it of any row of that pass and of
        a re-run. A probe batch is compared with the reference of its own size: kernels may round
        another batch size differently (on one CPU, one row against two or more), which would
        read as every output moving."""
        got = self.references.get(b)
        if got is not None:
            return got
        torch = self.torch
        x = self.base.expand(b, self.n, self.width)
        reference, noise = None, 0.0
        # One pass held at a time, and row 0 copied out of it (a view would keep all b rows).
        for _ in range(2):
            with torch.no_grad():
                run = self._call(lambda: self._forward(x.clone()))
            if reference is None:
                reference = [h[:1].clone() for h in run]
            noise = max([noise] + [float((h.float() - r.float()).abs().nan_to_num(float("inf")).max())
                                   for h, r in zip(run, reference) if h.numel()])
            del run
        self.references[b] = (reference, noise)
        if noise and not self.noise:
            self.notes.append(f"the kernel's noise floor is {noise:.3g} (an unchanged re-run differs): an output "
                              "counts as moved only above it, so this is not a proof")
        self.noise = max(self.noise or 0.0, noise)
        return reference, noise

    def moved(self, probes):
        """probes: a list of index arrays. Returns (len(probes), L, n) bool: the outputs that moved."""
        return self.levels(probes) > 0

    def levels(self, probes):
        """(len(probes), L, n) uint8: 0 unmoved, 1 moved at rounding level only (difference mode: at
        most ROUNDING_ULPS units in the last place of the reference), 2 moved."""
        out = []
        for i in range(0, len(probes), self.batch):
            out.append(self._moved_batch(probes[i:i + self.batch]))
        return np.concatenate(out, axis=0)

    def _moved_batch(self, probes):
        torch = self.torch
        b = len(probes)
        x = self.base.expand(b, self.n, self.width).clone()
        if self.mode == "exact":
            t = torch.zeros(b, self.n, self.width, dtype=self.dtype, device=self.device)
            for i, p in enumerate(probes):
                p = torch.as_tensor(p, dtype=torch.long, device=self.device)
                t[i, p] = self._random((len(p), self.width))
            with torch.no_grad():
                tangents = self._call(lambda: self._forward(x, t))
            moved = [np.zeros((b, self.n), dtype=np.uint8) if g is None else
                     g.ne(0).reshape(b, self.n, -1).any(-1).cpu().numpy().astype(np.uint8) * 2 for g in tangents]
        else:
            for i, p in enumerate(probes):
                p = torch.as_tensor(p, dtype=torch.long, device=self.device)
                x[i, p] = self._random((len(p), self.width))
            reference, noise = self._reference(b)
            with torch.no_grad():
                hs = self._call(lambda: self._forward(x))
            moved = []
            for h, ref in zip(hs, reference):
                h = h.reshape(b, self.n, -1)
                ref = ref.reshape(1, self.n, -1)
                diff = (h.double() - ref.double()).abs()
                d = (h != ref) if not noise else diff > noise
                # a change within a few units in the last place of the reference: rounding that other
                # tokens can cause (MoE grouped matmuls, split reductions), or a leak that tiny
                eps = torch.finfo(ref.dtype).eps if ref.is_floating_point() else 0.0
                big = diff > ROUNDING_ULPS * eps * ref.double().abs().clamp_min(torch.finfo(torch.float32).tiny)
                lvl = d.any(-1).to(torch.uint8) + (d & big).any(-1).to(torch.uint8)
                moved.append(lvl.cpu().numpy())
        self.probes += b
        return np.stack(moved, axis=1)


class _NoForwardAD(Exception):
    pass


# --- the prediction -----------------------------------------------------------------------------------

class _Prediction:
    """The predicted R(l) of every layer, as interval rows (`rows[l]`: arrays q, lo, hi with hi
    inclusive) or dense (`dense[l]`, (n, n))."""

    def __init__(self, source, layers, n, rows=None, dense=None):
        self.source, self.layers, self.n = source, layers, n
        self.rows, self.dense = rows, dense

    def column(self, l, k):
        if self.dense is not None:
            return self.dense[l][:, k].copy()
        q, lo, hi = self.rows[l]
        out = np.zeros(self.n, dtype=bool)
        out[q[(lo <= k) & (k <= hi)]] = True
        return out

    def reach_of(self, l, member):
        """Outputs whose row at layer l meets the positions where `member` (bool n) is set."""
        if self.dense is not None:
            return self.dense[l][:, member].any(1)
        cum = np.concatenate([[0], np.cumsum(member)])
        q, lo, hi = self.rows[l]
        hit = cum[hi + 1] - cum[lo] > 0
        out = np.zeros(self.n, dtype=bool)
        out[q[hit]] = True
        return out



def _predicted_from_config(conf, n, docs, images, packing="position_ids"):
    from . import model as run_model

    kw = {"images": images} if images else {}
    r = run_model(conf, n, docs or None, rows=range(n), **kw)
    notes = [f"the config: {x}" for x in r.json.get("notes", []) if "pack" in x.lower()]
    if docs and packing == "mask" and r.json.get("packing") != "detected" and not r.json.get("encoder"):
        return _per_document(conf, n, docs, r, run_model), notes
    if not r.json.get("encoder"):
        return _Prediction(f"its config ({r.json['pattern']})", r.json["layers"], n,
                           rows=_rows_of(r.json, range(r.json["layers"]), 0, n)), notes
    # An encoder-decoder config measured through one half (T5EncoderModel, or a decoder stack alone):
    # the encoder's layers over n encoder positions, or the decoder's over n decoder positions.
    if docs:
        raise HasseflowError("measure: packed documents in one half of an encoder-decoder are not predicted; "
                             "measure without documents, or give expected=")
    enc_layers = r.json["encoder"]["layers"]
    if getattr(conf, "is_decoder", False):
        r = run_model(conf, n, encoder_context=1, rows=range(1, n + 1), **kw)
        layers = range(enc_layers, r.json["layers"])
        return _Prediction(f"its config's decoder ({r.json['pattern']})", len(layers), n,
                           rows=_rows_of(r.json, layers, 1, n)), notes
    r = run_model(conf, 1, encoder_context=n, rows=range(n), **kw)
    return _Prediction(f"its config's encoder ({r.json['encoder']['pattern']})", enc_layers, n,
                       rows=_rows_of(r.json, range(enc_layers), 0, n)), notes


def _per_document(conf, n, docs, whole, run_model):
    """The prediction under a packed 4-D mask for a type that does not detect packing itself: the mask
    keeps its attention layers within each document, so each document runs alone. Layers without a
    mask (recurrent, convolution) would still read across: those are refused."""
    kinds = [str(t) for t in whole.json.get("types", [])]
    if not all(any(w in t for w in ("full_attention", "sliding_attention", "chunked_attention")) and
               "linear" not in t for t in kinds):
        raise HasseflowError(f"measure: packing='mask' on a {whole.json.get('model_type')} model: its layers "
                             f"({', '.join(sorted(set(kinds)))}) are not all attention, which a 4-D mask would keep "
                             "within documents; give expected= or packing='position_ids'")
    layers = whole.json["layers"]
    per_layer = [([], [], []) for _ in range(layers)]
    start = 0
    for d in docs:
        rows = _rows_of(run_model(conf, d, rows=range(d)).json, range(layers), 0, d)
        for l, (q, lo, hi) in enumerate(rows):
            per_layer[l][0].append(q + start)
            per_layer[l][1].append(lo + start)
            per_layer[l][2].append(hi + start)
        start += d
    rows = [tuple(np.concatenate(a) for a in t) for t in per_layer]
    return _Prediction(f"its config ({whole.json['pattern']}) under the packed 4-D mask", layers, n, rows=rows)


def _rows_of(report, layers, offset, n):
    """Interval rows (q, lo, hi) of the given layers of a `model()` report, shifted by `offset` and
    clipped to 0..n."""
    per_layer = [([], [], []) for _ in layers]
    for qs, per in report["rows"].items():
        q = int(qs) - offset
        for i, l in enumerate(layers):
            for lo, hi in per[l]:
                lo, hi = max(lo - offset, 0), min(hi - offset, n - 1)
                if lo <= hi:
                    per_layer[i][0].append(q)
                    per_layer[i][1].append(lo)
                    per_layer[i][2].append(hi)
    return [tuple(np.asarray(a, dtype=np.int64) for a in t) for t in per_layer]


def _predicted_from_mask(mask, n, layers, b, h):
    from . import _inputs, MAX_N

    if isinstance(mask, (list, tuple)) or getattr(mask, "ndim", 0) == 3:
        masks = list(mask)
        if len(masks) != layers:
            raise HasseflowError(f"measure: expected= has {len(masks)} layers, the model {layers}")
        dense = [_dense_mask(m, n, b, h) for m in masks]
        out, acc = [], np.eye(n, dtype=bool)
        for m in dense:
            acc = _compose(acc, m | np.eye(n, dtype=bool))
            out.append(acc.copy())
        return _Prediction("the given per-layer masks", layers, n, dense=out)
    if n > MAX_N:
        raise HasseflowError(f"measure: expected= is compared densely, up to n = {MAX_N}; at n = {n} measure against "
                             "the model's config")
    dense = _dense_mask(mask, n, b, h)
    text, _ = _native.analyze_words(_inputs.words_of(dense), n, None, True)
    first = json.loads(text)["first_reach"]
    fr = np.array([[-1 if x is None else x for x in row] for row in first])
    return _Prediction("the given mask in every layer", layers, n,
                       dense=[(fr >= 0) & (fr <= l) for l in range(1, layers + 1)])


def _compose(reach, m):
    """R(l) = R(l-1) composed with one layer (M or I): q reads k when q reads some j in m that reads k."""
    return (m.astype(np.float32) @ reach.astype(np.float32)) > 0


def _dense_mask(mask, n, b, h):
    from . import _inputs

    if _inputs.is_block_mask(mask):
        size, (offsets, spans) = _inputs.block_mask_rows(mask, b, h)
        dense = _inputs.rows_to_dense(size, offsets, spans)
    elif callable(mask):
        dense = _inputs.mask_mod_dense(mask, n, b, h)
    else:
        dense = _inputs.square(_inputs.as_bool_array(mask))
    if dense.shape[0] != n:
        raise HasseflowError(f"measure: the mask has {dense.shape[0]} positions, the measurement {n}")
    return dense


# --- choosing probes ------------------------------------------------------------------------------------

def _auto_columns(n, docs, images, pred, rng):
    """Positions where the prediction has structure: the first and last, document starts and ends,
    image span edges, where the predicted first-layer column changes shape (window and chunk
    edges, sinks, globals), plus a few random ones."""
    cand = {0, n - 1, n // 2}
    start = 0
    for d in docs:
        cand.update({start, start + d - 1})
        start += d
    for s, length in images or ():
        cand.update({s, s + length - 1, max(s - 1, 0), min(s + length, n - 1)})
    if pred is not None and pred.rows is not None:
        q, lo, hi = pred.rows[0]
        # Where the rows' left ends stop sliding one by one (a window slides regularly; chunk and
        # document edges, sinks and globals break the step), among the rows' interval ends.
        edges = np.unique(np.concatenate([lo, hi, hi + 1]))
        edges = edges[(edges >= 0) & (edges < n)]
        counts = np.bincount(lo, minlength=n)[:n]
        irregular = np.nonzero(np.diff(counts, prepend=counts[0]) != 0)[0]
        picks = np.intersect1d(edges, irregular)
        if len(picks) > MAX_AUTO_COLUMNS:
            picks = picks[np.linspace(0, len(picks) - 1, MAX_AUTO_COLUMNS).astype(np.int64)]
        cand.update(int(x) for x in picks)
    cand = {c for c in cand if 0 <= c < n}
    if len(cand) > MAX_AUTO_COLUMNS:
        cs = sorted(cand)
        cand = set(cs[i] for i in np.linspace(0, len(cs) - 1, MAX_AUTO_COLUMNS).astype(np.int64))
    extra = rng.choice(n, size=min(RANDOM_COLUMNS, n), replace=False)
    cand.update(int(x) for x in extra)
    return sorted(cand)


def _bit_groups(parts):
    """Groups of part indices coded by the bits of the index, and their complements: every ordered
    pair (a, b), a != b, has a group holding a and not b."""
    d = len(parts)
    if d < 2:
        return []
    bits = max(1, math.ceil(math.log2(d)))
    groups = []
    for j in range(bits):
        inside = [i for i in range(d) if (i >> j) & 1]
        outside = [i for i in range(d) if not (i >> j) & 1]
        groups += [inside, outside]
    return [g for g in groups if g]


# --- measure ----------------------------------------------------------------------------------------------

def measure(model, n, documents=None, *, expected=None, images=None, columns=None, mode="auto", groups=True,
            packing="position_ids", attention_mask=None, batch=None, full=None, b=0, h=0, seed=0,
            batch_bytes=BATCH_BYTES):
    """Measures the model's true per-layer reach at `n` positions, as it runs (in place: its dtype,
    device(s) and attention implementation, under no_grad, in eval mode, restored afterwards), and
    compares it with what its config says (`hasseflow.model(model.config, n, documents)`) or with
    `expected` (a mask_mod, BlockMask or (n, n) mask in every layer, or a list of them, one per layer).

    - `documents`: packed document lengths summing to n, given to the model as `packing`:
      `"position_ids"` (restarting at 0 per document, as Transformers detects packing),
      `"varlen"` (the position ids plus the flash-attention keyword arguments `cu_seq_lens_q/k`,
      `max_length_q/k` that `DataCollatorWithFlattening` emits) or `"mask"` (a 4-D additive mask).
    - `attention_mask`: a 2-D `(1, n)` (or `(n,)`) padding mask or a 4-D mask, passed as given;
      positions it marks 0 are padding: not compared as outputs, predicted unread as keys.
    - `images`: `(start, length)` spans of image tokens (`token_type_ids` 1), which read each other
      both ways (Gemma 3).
    - `mode`: `"exact"` (forward-mode derivatives; the attention must have forward-mode rules, as
      eager attention does), `"difference"` (any implementation: outputs compared bit for bit with
      an unchanged run) or `"auto"` (exact where it runs and agrees with a difference probe, else
      difference).
    - `columns`: positions whose column of every R(l) is measured exactly (default: every column up
      to n = 1024 (`full=`), else chosen where the prediction has structure, plus random ones).
    - `groups`: with documents, the bit-coded group tests of every ordered pair of documents (True),
      or a per-position partition label array to test instead; False for none.
    - `batch`: probes per forward call (default: as many as `batch_bytes` allows).

    Returns a `Measurement` (`agrees`, `leaks`, `first_leak`, `passes`, `per_layer`, ...)."""
    import torch  # noqa: F401  (a clear ImportError before any work)

    n = _as_int(n, "n")
    if n < 1:
        raise HasseflowError(f"measure: n = {n}: give a positive number of positions")
    if mode not in MODES:
        raise HasseflowError(f"measure: mode = {mode!r}; give one of {', '.join(MODES)}")
    if packing not in PACKINGS:
        raise HasseflowError(f"measure: packing = {packing!r}; give one of {', '.join(PACKINGS)}")
    docs = _documents(documents, n)
    imgs = _images(images, n)
    conf = getattr(model, "config", None)
    if conf is not None and getattr(conf, "is_encoder_decoder", False):
        raise HasseflowError("measure: an encoder-decoder model takes two inputs; measure its encoder or decoder "
                             "alone (e.g. model.get_encoder(), or T5EncoderModel)")
    limit = getattr(conf, "max_position_embeddings", None)
    notes = []
    if isinstance(limit, int) and 0 < limit < n:
        notes.append(f"n = {n} is above the config's max_position_embeddings = {limit}: positions past it are "
                     "measured as the model computes them")
    params = _forward_params(model)
    spec = _input_spec(model)
    kw, batched = _forward_kwargs(params, n, docs, packing, attention_mask, imgs, spec[2])
    if packing == "mask" and docs:
        causal = not getattr(conf, "is_encoder_decoder", False) and _is_causal(conf)
        batched["attention_mask"] = _four_d_mask(n, docs, causal, spec[1], spec[2])
    if full is None:
        full = columns is None and n <= FULL_MAX_N
    heads = _int_attr(conf, ("num_attention_heads", "n_head", "num_heads"), 8)
    per_probe = n * n * heads * 4 * 3 + n * spec[0] * 64 * 4
    # Every column (small n): as many probes a call as the memory allows. Probes at real length: one a
    # call, the reference's shape, so a compiled kernel (flex_attention) compiles once.
    bsize = _as_int(batch, "batch") if batch is not None else \
        max(1, min(64, batch_bytes // max(per_probe, 1))) if full else 1
    was_training = model.training
    model.eval()
    try:
        return _measure(model, n, docs, imgs, conf, expected, columns, mode, groups, attention_mask, full, b, h,
                        seed, spec, kw, batched, bsize, notes, packing)
    finally:
        model.train(was_training)


def _is_causal(conf):
    """Whether the model's own mask is causal, as the core's config reader (checked against every
    Transformers type) reads it; a config it cannot read is taken as a decoder's unless it says
    `is_causal: false`."""
    if conf is None or not hasattr(conf, "to_json_string"):
        return True
    from . import model as run_model

    try:
        return bool(run_model(conf, 1).json["causal"])
    except HasseflowError:
        return getattr(conf, "is_causal", True) is not False


def _int_attr(conf, names, default):
    for k in names:
        v = getattr(conf, k, None)
        if isinstance(v, int) and v > 0:
            return v
    return default


def _documents(documents, n):
    from ._inputs import document_lengths

    out = document_lengths(documents, "measure: documents")
    if out and sum(out) != n:
        raise HasseflowError(f"measure: the document lengths {_short(out)} sum to {sum(out)}, but n = {n}")
    return out if len(out) > 1 else []


def _short(xs, what="documents"):
    return str(xs) if len(xs) <= 8 else f"[{', '.join(map(str, xs[:6]))}, ... ({len(xs)} {what})]"


def _images(images, n):
    """The spans as (start, length) pairs inside n, sorted, touching ones merged."""
    from ._inputs import image_spans

    out = []
    for i, (s, length) in enumerate(image_spans(images)):
        if length < 1 or s + length > n:
            raise HasseflowError(f"measure: image {i} ({s}, {length}) is not inside 0..{n}")
        out.append((s, length))
    out.sort()
    merged = []
    for s, length in out:
        if merged and s < merged[-1][0] + merged[-1][1]:
            raise HasseflowError(f"measure: images at {merged[-1][0]} and {s} overlap")
        if merged and s == merged[-1][0] + merged[-1][1]:
            # touching spans are one run of token_type_ids 1: one image to the model
            merged[-1] = (merged[-1][0], merged[-1][1] + length)
        else:
            merged.append((s, length))
    return merged


def _measure(model, n, docs, imgs, conf, expected, columns, mode, groups, attention_mask, full, b, h, seed, spec,
             kw, batched, bsize, notes, packing="position_ids"):
    rng = np.random.default_rng(seed)
    # The prediction, before any pass (a refused config costs no forward).
    pred = None
    if expected is None and conf is not None and hasattr(conf, "to_json_string"):
        pred, pnotes = _predicted_from_config(conf, n, docs, imgs, packing)
        notes += pnotes
        if docs and attention_mask is not None and packing != "mask":
            notes.append("a 2-D attention_mask beside packed position ids makes Transformers ignore the packing (it "
                         "looks for packed documents only without one): the prediction is the packed one")
    if full:
        cols = list(range(n))
    elif columns is not None:
        cols = sorted({_as_int(c, "a column") for c in columns})
        bad = [c for c in cols if not 0 <= c < n]
        if bad:
            raise HasseflowError(f"measure: column {bad[0]} is not a position of 0..{n - 1}")
    else:
        cols = _auto_columns(n, docs, imgs, pred, rng)
    real = np.ones(n, dtype=bool)
    if attention_mask is not None:
        am = np.asarray(attention_mask.detach().cpu() if hasattr(attention_mask, "detach") else attention_mask)
        if am.ndim <= 2:
            real = am.reshape(-1).astype(bool)
    runner, used_mode = _runner(model, n, kw, batched, mode, seed, bsize, spec, cols[0])
    col_levels = runner.levels([np.array([c]) for c in cols])  # (C, L, n)
    col_moved = col_levels > 0
    layers = col_moved.shape[1]
    if expected is not None:
        pred = _predicted_from_mask(expected, n, layers, b, h)
    if pred is not None and pred.layers != layers:
        notes.append(f"the prediction has {pred.layers} layers, the model returned {layers} hidden states: the first "
                     f"{min(layers, pred.layers)} are compared")
    L = min(layers, pred.layers) if pred is not None else layers
    col_reach = np.transpose(col_moved[:, :L], (1, 0, 2))  # (L, C, n)
    col_round = np.transpose(col_levels[:, :L] == 1, (1, 0, 2))
    col_pred = None
    if pred is not None:
        col_pred = np.stack([np.stack([_mask_padding(pred.column(l, c), real, c) for c in cols]) for l in range(L)])
        col_reach = col_reach & real[None, None, :] | (col_pred & ~real[None, None, :])
    doc = np.repeat(np.arange(len(docs)), docs) if docs else None
    colarr = np.asarray(cols)
    rows, leaks = [], []
    for l in range(L):
        r = col_reach[l]
        row = {"layer": l + 1, "measured": int(r.sum())}
        back_m = _back(r, colarr)
        row["back"] = back_m
        if col_pred is not None:
            p = col_pred[l]
            extra = r & ~p
            row.update(predicted=int(p.sum()), missing=int((p & ~r).sum()), extra=int(extra.sum()),
                       predicted_back=_back(p, colarr))
            if used_mode == "difference":
                row["extra_rounding"] = int((extra & col_round[l]).sum())
            leaks += _first_cell(extra, colarr, l)
        if doc is not None:
            cross = r & (doc[colarr][:, None] != doc[None, :])
            row["cross_document"] = int(cross.sum())
            leaks += _first_cell(cross, colarr, l)
        rows.append(row)
    # Group tests over the partition: documents, or the user's labels.
    part = None
    if groups is True and docs:
        part = doc
    elif groups is not True and groups is not False and groups is not None:
        part = np.asarray(groups).reshape(-1)
        if part.shape != (n,):
            raise HasseflowError(f"measure: groups= has {part.size} labels; give one per position (n = {n})")
    group_info = None
    if part is not None and not full:
        group_info, gleak = _group_tests(runner, pred, part, L, real, docs, min(leaks) if leaks else None)
        for row, e in zip(rows, group_info["extra_per_layer"]):
            row["group_extra"] = e
        if gleak is not None:
            leaks.append(gleak)
    first_leak = min(leaks) if leaks else None
    agrees = pred is not None and all(r["missing"] == 0 and r["extra"] == 0 and r.get("group_extra", 0) == 0
                                      for r in rows)
    notes += runner.notes
    rounding = sum(r.get("extra_rounding", 0) for r in rows)
    if rounding:
        notes.append(f"{rounding} of the extra cells changed only at rounding level (at most {ROUNDING_ULPS} units in "
                     "the last place): kernels whose rounding depends on other tokens (MoE grouped matmuls, split "
                     "reductions) cause such changes without any flow; exact mode, where it runs, tells them apart")
    notes += _window_notes(rows, n)
    if pred is not None and not agrees and any(r["missing"] for r in rows):
        notes.append(_missing_hint(conf, used_mode))
    passes = {"mode": used_mode, "probes": runner.probes, "forwards": runner.forwards, "batch": bsize,
              "columns": len(cols), "groups": group_info["groups"] if group_info else 0,
              "bisection": group_info["bisection"] if group_info else 0,
              "noise_floor": runner.noise if used_mode == "difference" else None}
    data = {
        "model": type(model).__name__ if conf is None else getattr(conf, "model_type", type(model).__name__),
        "n": n, "layers": L, "documents": docs, "images": [list(x) for x in imgs],
        "predicted_from": pred.source if pred is not None else None, "agrees": bool(agrees),
        "leaks": first_leak is not None, "first_leak": list(first_leak) if first_leak else None,
        "columns_measured": "all" if full else "some", "columns": [int(c) for c in cols] if not full else None,
        "cross_document_cells": rows[-1].get("cross_document", 0) if rows and full else None,
        "passes": passes, "per_layer": rows, "proves": _proves(full, cols, group_info, used_mode, runner, docs),
        "notes": notes,
    }
    reach = predicted = None
    if full:
        reach = np.transpose(col_reach, (0, 2, 1)).copy()  # (L, q, k)
        predicted = None if col_pred is None else np.transpose(col_pred, (0, 2, 1)).copy()
        data["columns"] = list(range(n))
    result = Measurement(data, reach, predicted, docs, col_reach, col_pred)
    result._link = _model_link(conf, n, docs, imgs)
    return result


def _model_link(conf, n, docs, imgs):
    """The Models view's link of a measured model (its config at this context), or None."""
    if conf is None or not hasattr(conf, "to_json_string"):
        return None
    return {"config": conf.to_json_string(use_diff=False), "name": f"{getattr(conf, 'model_type', 'model')} config",
            "n": int(n), "documents": [int(d) for d in docs], "images": [[int(a), int(b)] for a, b in imgs]}


def _first_cell(cells, cols, l):
    """[(layer, q, k)] of the first set cell (smallest q, then k) of a (C, n) column block, or []."""
    ci, q = np.nonzero(cells)
    if not len(q):
        return []
    i = np.lexsort((cols[ci], q))[0]
    return [(l + 1, int(q[i]), int(cols[ci[i]]))]


def _mask_padding(col, real, k):
    """A predicted column with padding: a padding key is read by nobody but itself."""
    if real[k]:
        return col
    out = np.zeros_like(col)
    out[k] = True
    return out


def _back(r, cols):
    """How far back the outputs read: the largest q - k over the measured cells (0 when none)."""
    ci, q = np.nonzero(r)
    if not len(q):
        return 0
    return int((q - cols[ci]).max())


def _runner(model, n, kw, batched, mode, seed, bsize, spec, first_col):
    """The runner for `mode`; in auto mode exact when it runs and one probe agrees with difference."""
    if mode == "difference":
        r = _Runner(model, n, kw, batched, "difference", seed, bsize, spec)
        r.prepare()
        return r, "difference"
    exact = _Runner(model, n, kw, batched, "exact", seed, bsize, spec)
    try:
        a = exact.moved([np.array([first_col])])
    except _NoForwardAD as e:
        if mode == "exact":
            raise HasseflowError(f"measure: exact mode needs forward-mode derivatives, and the model's attention has "
                                 f"none ({e}); mode='difference' runs any implementation") from None
        r = _Runner(model, n, kw, batched, "difference", seed, bsize, spec)
        r.prepare()
        r.notes.append("difference mode: the model's attention has no forward-mode derivatives")
        return r, "difference"
    if mode == "exact":
        return exact, "exact"
    # auto: check exact against one difference probe (a kernel that drops the tangent would hide reach).
    diff = _Runner(model, n, kw, batched, "difference", seed, 1, spec)
    diff.prepare()
    d = diff.levels([np.array([first_col])])
    # exact must see every output the difference probe clearly moved (rounding-level moves aside)
    if d.shape == a.shape and not ((d == 2) & ~a).any():
        exact.forwards += diff.forwards  # the check's passes count
        exact.probes += diff.probes
        return exact, "exact"
    diff.batch = bsize
    diff.notes.append(f"difference mode: exact mode disagreed with a difference probe at column {first_col} (a kernel "
                      "without true forward-mode derivatives)")
    diff.forwards += exact.forwards
    diff.probes += exact.probes
    return diff, "difference"


def _group_tests(runner, pred, part, L, real, docs, known=None):
    """The bit-coded group tests; the first hit is bisected to its k unless a measured column already
    gave a leak at the same or an earlier (layer, q) (`known`)."""
    labels, inverse = np.unique(part, return_inverse=True)
    members = [np.nonzero(inverse == i)[0] for i in range(len(labels))]
    groups = _bit_groups(members)
    probes = [np.concatenate([members[i] for i in g]) for g in groups]
    moved = runner.moved(probes) if probes else np.zeros((0, L, len(part)), dtype=bool)
    extra_per_layer = [0] * L
    hits = []  # (layer, q, group index)
    for gi, (g, p) in enumerate(zip(groups, probes)):
        member = np.zeros(len(part), dtype=bool)
        member[p] = True
        in_group = np.isin(inverse, g)
        for l in range(L):
            m = moved[gi, l] & real
            bad = m & ~in_group if docs else np.zeros_like(m)
            if pred is not None:
                reach = pred.reach_of(l, member)
                out = m & ~reach
                extra_per_layer[l] += int(out.sum())
                bad = bad | out
            qs = np.nonzero(bad)[0]
            if len(qs):
                hits.append((l, int(qs[0]), gi))
    info = {"groups": len(groups), "extra_per_layer": extra_per_layer, "bisection": 0,
            "pairs": len(members) * (len(members) - 1), "hit": bool(hits)}
    if not hits:
        return info, None
    l, q, gi = min(hits)
    if known is not None and (known[0], known[1]) <= (l + 1, q):
        return info, None
    k, steps = _bisect(runner, probes[gi], l, q)
    info["bisection"] = steps
    if k is None:
        runner.notes.append(f"group {gi} moves output {q} at layer {l + 1}, but no single position of it does: the "
                            "change needs several positions at once")
        k = int(probes[gi][0])
    return info, (l + 1, q, k)


def _bisect(runner, positions, layer, q):
    """Narrows a probe that moves output q at `layer` to one position k: each step changes one half
    alone (one pass) and keeps it if q moves, else the other half; a last pass confirms k alone.
    Returns (k, passes); k is None when the change needs several positions at once (no single
    position moves q: possible in difference mode, where the model is not linear)."""
    s = np.asarray(positions)
    steps = 0
    while len(s) > 1:
        a, b = s[:len(s) // 2], s[len(s) // 2:]
        steps += 1
        s = a if runner.moved([a])[0, layer, q] else b
    steps += 1
    if not runner.moved([s])[0, layer, q]:
        return None, steps
    return int(s[0]), steps


def _window_notes(rows, n):
    """The first layer whose measured reach back differs from the prediction's, in keys per layer."""
    prev_m = prev_p = 0
    for r in rows:
        if "predicted_back" not in r:
            return []
        km, kp = r["back"] - prev_m + 1, r["predicted_back"] - prev_p + 1
        if km != kp:
            return [f"layer {r['layer']} reads {km} keys back (itself included); the prediction says {kp}"]
        prev_m, prev_p = r["back"], r["predicted_back"]
        if max(prev_m, prev_p) >= n - 1:
            return []
    return []


def _missing_hint(conf, mode):
    kinds = set(getattr(conf, "layer_types", None) or [])
    linear = [k for k in kinds if any(w in str(k) for w in ("linear", "mamba", "conv", "ssm", "recurrent"))]
    if linear:
        return ("missing cells with linear-attention or SSM layers ("
                + ", ".join(sorted(linear)) + ") are likely decays that underflow to exactly zero in random weights: "
                "check with hasseflow.redraw(model) (re-draws the decays and all-zero parameters, as the live test "
                "does) and measure again; trained weights are measured as they are")
    return ("missing cells: the model reads less than predicted (or, in exact mode, a kernel drops derivatives: try "
            "mode='difference')" if mode == "exact" else "missing cells: the model reads less than predicted")


def redraw(model):
    """Re-draws, in place, the parameters of a randomly initialised model that would make `measure`
    short: all-zero tensors (zero-initialised projections or gates cut paths) and SSM /
    linear-attention decays (a large A_log or dt bias makes the decay underflow to exactly zero over
    a few dozen steps: a randomly initialised Qwen3-Next misses 59 cells per layer). What the live
    test of every model type does before measuring. Returns notes of what was re-drawn. Only for
    random weights: a trained model is measured as it is."""
    notes = []
    import torch

    zeroed = []
    decays = []
    with torch.no_grad():
        for name, p in model.named_parameters():
            base = name.rsplit(".", 1)[-1]
            if base in ("A_log", "A_logs", "time_decay", "dt_bias", "dt_proj_bias", "decay", "A", "log_decay",
                        "a_log", "time_maa_w", "alpha_log"):
                if base in ("A", "A_log", "A_logs", "a_log", "log_decay", "alpha_log"):
                    p.uniform_(-1.0, 0.0)
                else:  # dt biases and RWKV time_decay: a small step (decay close to 1)
                    p.uniform_(-4.0, -3.0)
                decays.append(base)
                continue
            if p.numel() and bool((p == 0).all()):
                p.normal_(0.0, 0.02)
                if base != "bias":
                    zeroed.append(base)
    if decays:
        notes.append(f"decays re-drawn small ({', '.join(sorted(set(decays)))})")
    if zeroed:
        notes.append(f"all-zero parameters re-drawn ({', '.join(sorted(set(zeroed))[:6])})")
    return notes


def _proves(full, cols, group_info, mode, runner, docs):
    how = "forward-mode derivatives (structural zeros)" if mode == "exact" else (
        "bit-identical outputs against an unchanged run" if not runner.noise else
        f"outputs compared above a noise floor of {runner.noise:.3g}")
    parts = [f"every column of every R(l) ({how})" if full else
             f"columns {_short(list(cols), 'columns')} of every R(l), exactly ({how})"]
    if group_info:
        d = len(docs)
        found = "some positions reach" if group_info["hit"] else "no position reaches"
        parts.append(f"{group_info['groups']} group tests: {found} outside their group's predicted reach, "
                     f"over every ordered pair of the {d or 'given'} parts ({group_info['pairs']} pairs)")
    return "; ".join(parts)
