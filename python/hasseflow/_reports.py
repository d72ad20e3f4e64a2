"""Result objects: the core's JSON reports (the CLI's `--json` schema) with attributes, tables,
pictures for notebooks (the render crate's SVG) and links to the web app."""

import json

import numpy as np

from . import _app, _native, _pictures
from ._inputs import mask_of_words, words_of

# The largest mask the app's editor opens from a link.
APP_MAX_N = 512
# Grid colours: the app's empty cell, reach and its flow view's "measurement differs" mark.
REACH = "#0072b2"
MISSING = "#e69f00"
EXTRA = "#e6007e"


def _table(rows):
    """A list of dicts, or a pandas DataFrame when pandas is installed."""
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows)


class Limit:
    """The limit `R(L*)` of a result, the same object whatever the engine or the size: `n`, `cells`
    (its entries), `classes` (how many strongly connected classes it has) and, where the dense
    relation was computed, `array()` (an `(n, n)` bool array; also what `numpy.asarray(limit)`
    gives). The structured engine and the model engine keep the limit as interval rows and its
    order structure, not as an array: `array()` then raises `HasseflowError` saying so."""

    def __init__(self, n, cells, classes, words=None, why=None):
        self.n, self.cells, self.classes = int(n), int(cells), None if classes is None else int(classes)
        self._words = words
        self._why = why or "this result keeps the limit as interval rows, not as a dense array"

    @property
    def dense(self):
        """Whether `array()` is available."""
        return self._words is not None

    def array(self):
        """The limit as an `(n, n)` bool array (`limit[q, k]`: q reaches k at L*)."""
        if self._words is None:
            raise _native.HasseflowError(f"limit.array(): {self._why} (n = {self.n})")
        return mask_of_words(self._words, self.n)

    def __array__(self, dtype=None, copy=None):
        a = self.array()
        return a if dtype is None else a.astype(dtype)

    def __repr__(self):
        return f"<Limit n = {self.n}, {self.cells} cells, {self.classes} classes>"


def _layer_rows(growth, limit_cells, extra=None):
    """The per-layer rows every result shares: layer l >= 1, its cells |R(l)| and their share of
    the limit (`coverage`), plus the result's own columns (`extra[l - 1]`)."""
    limit = max(1, int(limit_cells))
    rows = []
    for layer, cells in enumerate(growth[1:], start=1):
        row = {"layer": layer, "cells": int(cells), "coverage": int(cells) / limit}
        if extra is not None:
            row.update({k: v for k, v in extra[layer - 1].items() if k not in row})
        rows.append(row)
    return rows


class Report:
    """A report of the core: every field of the CLI's JSON object is an attribute (`r.growth`,
    `r.full_at`, ...) and `r.json` is the object itself.

    Every result (`Analysis`, `ModelReport`, `Derived`, `Measurement`) answers the same names with
    the same types (docs/PYTHON.md, "One vocabulary"): `n`, `L_star`, `full_at`, `growth`,
    `per_layer` (alias `table`), and, but for a measurement, `classes` (a count, members through
    `class_members()`) and `limit` (a `Limit`)."""

    @property
    def table(self):
        """The per-layer table (`per_layer`)."""
        return self.per_layer

    def __init__(self, data):
        self.json = data

    def __getattr__(self, name):
        data = self.__dict__.get("json")
        if data is not None and name in data:
            return data[name]
        raise AttributeError(f"{type(self).__name__} has no field {name!r}")

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.json))

    def to_json(self):
        """The report as the CLI prints it with --json (without dense limits)."""
        return json.dumps(self.json)

    def picture(self, layer=None, dark=False):
        """The result's pictures (a `Picture`: inline in a notebook, `.show()`, `.save(path)`): the
        mask grid, R(layer) by first-reach layer (default: half way to the limit), the growth
        plot, and the compressed Hasse diagram when it has structure. At long lengths the grids
        are heatmaps of shares."""
        figures, notes = self._figures(layer, dark)
        return _pictures.Picture(self._title(), self._summary(), figures, notes)

    def _default_picture(self):
        """The picture the rich display shows, drawn once (Jupyter asks for HTML and SVG)."""
        if "_shown" not in self.__dict__:
            self.__dict__["_shown"] = self.picture()
        return self.__dict__["_shown"]

    def _repr_html_(self):
        return self._default_picture()._repr_html_()

    def _repr_svg_(self):
        return self._default_picture()._repr_svg_()

    def show(self, layer=None):
        """Shows the pictures: inline in a notebook; else an HTML file opened in a browser when one
        opens, its path printed otherwise (and returned)."""
        return self.picture(layer).show()

    def _figures(self, layer, dark):
        """`([(caption, svg)], [note])` of the pictures at `layer`."""
        return [], []

    def app_link(self, base=None):
        """A link that opens this result in the web app (`base`: the app's URL; default
        `hasseflow.app()`: $HASSEFLOW_APP_URL, else the bundled app served locally)."""
        raise _native.HasseflowError(f"app_link: a {type(self).__name__} has no view in the app")

    def __repr__(self):
        return f"<{type(self).__name__} {self._summary()}>"

    def _title(self):
        return type(self).__name__

    def _summary(self):
        return ""


class Analysis(Report):
    """`hasseflow.analyze(...)`: the dense report (`engine == "dense"`) or the structured engine's
    (`engine == "structured"`, long sequences). `L_star` is the CLI's `depth`: the layer at which
    every position reaches all it ever will (None when a structured run is too shallow)."""

    def __init__(self, data, limit_words=None, mask=None, notes=(), link_mask=None, labels=None, rows=None):
        super().__init__(data)
        self._rows = rows
        self._limit_words = limit_words
        self.mask = mask
        self.notes = list(notes)
        self._link_mask = link_mask if link_mask is not None else mask
        self._labels = labels

    @property
    def engine(self):
        return self.json.get("engine", "dense")

    @property
    def _reach(self):
        return None if self.engine == "dense" else self.json["reach"]

    @property
    def L_star(self):
        """The first layer whose reach is the limit (None: not within the layers run)."""
        return self.json["depth"] if self._reach is None else self._reach["full_at"]

    @property
    def full_at(self):
        """The layer at which every position reaches all it ever will: `L_star`."""
        return self.L_star

    @property
    def growth(self):
        """`growth[l]` = |R(l)| for l = 0 (the identity, n cells) up to the last layer run."""
        return list(self.json["growth"] if self._reach is None else self._reach["growth"])

    @property
    def n(self):
        return self.json["n"] if self._reach is None else self._reach["n"]

    @property
    def shortfall(self):
        return None if self._reach is None else self._reach["shortfall"]

    @property
    def limit_cells(self):
        if self._reach is None:
            return self.limit.cells
        return self._reach["limit_cells"]

    @property
    def limit(self):
        """The limit R(L*) (`Limit`): its cells and classes; `.array()` (or `numpy.asarray`) is the
        (n, n) bool array on the dense engine."""
        if self._reach is None:
            cells = int(mask_of_words(self._limit_words, self.n).sum()) if self._limit_words is not None else 0
            return Limit(self.n, cells, len(self.json["classes"]), self._limit_words)
        return Limit(self.n, self._reach["limit_cells"], self._reach["limit"]["classes"],
                     why="the structured engine keeps the limit as interval rows")

    @property
    def classes(self):
        """How many classes the limit has (positions that reach each other)."""
        return len(self.json["classes"]) if self._reach is None else int(self._reach["limit"]["classes"])

    def class_members(self):
        """The positions of each class (dense engine), lowest first; on the structured engine the
        classes are runs of positions: the compressed Hasse diagram's nodes (`reach["limit"]`)."""
        if self._reach is None:
            return [list(c) for c in self.json["classes"]]
        raise _native.HasseflowError("class_members(): the structured engine keeps classes as runs; read "
                                     "r.json['reach']['limit']['hasse']['nodes'] (each node's runs)")

    @property
    def hasse_edges(self):
        if self._reach is None:
            return self.json["hasse_edges"]
        h = self._reach["limit"].get("hasse")
        return None if h is None else [[e["lower"], e["upper"]] for e in h["edges"]]

    @property
    def per_layer(self):
        """Per layer l >= 1: `layer`, `cells` |R(l)|, `coverage` of the limit (structured runs add
        `lookback` and `queries_short`); a DataFrame with pandas, else a list of dicts."""
        extra = None
        if self._reach is not None:
            extra = [{"lookback": lay["lookback"], "queries_short": lay["queries_short"]} for lay in self._reach["layers"]]
        return _table(_layer_rows(self.growth, self.limit_cells, extra))

    def app_link(self, base=None):
        """The web app's share link for this mask: the editor opens masks up to n = 512 (longer
        ones have no view in the app; `derive` and `model` results link at any length)."""
        if self._link_mask is None or self._link_mask.shape[0] > APP_MAX_N:
            n = self.n if self._link_mask is None else self._link_mask.shape[0]
            raise _native.HasseflowError(
                f"app_link: the app's editor opens masks up to n = {APP_MAX_N}; this one has n = {n} (the Designer "
                "and Models views take derive() and model() results at any length)")
        m = self._link_mask
        return _app.base_url(base) + "#" + _native.share_fragment(words_of(m), m.shape[0], self._labels)

    def _title(self):
        return f"hasseflow analysis ({self.engine} engine)"

    def _summary(self):
        lstar = self.L_star
        depth = "not reached" if lstar is None else str(lstar)
        return f"n = {self.n}, L* = {depth}, classes = {self.classes}" if self.engine != "dense" \
            else f"n = {self.n}, L* = {depth}, {self.classes} classes, {len(self.hasse_edges)} Hasse edges"

    def _depth(self):
        if self.engine == "dense":
            return self.L_star
        return self.full_at or self.json["reach"].get("depth") or len(self.growth) - 1

    def _figures(self, layer, dark):
        layer = _pictures.default_layer(self._depth()) if layer is None else int(layer)
        figures, notes = [], []
        if self.engine == "dense":
            if self.mask is not None and self.mask.shape[0] == self.n and "stack" not in self.json:
                figures += _pictures.dense_figures(self.mask, layer, dark)
            else:
                notes.append("the grid and R(l) are drawn for a single mask (this analysis is of a per-layer stack)")
            figures.append(_pictures.growth_figure(self.growth, self.limit_cells, self.L_star, dark))
            hasse, note = _pictures.order_figure(self.json["classes"], self.json["hasse_edges"], self._labels, dark)
        else:
            if self._rows is not None:
                figures += _pictures.rows_figures(self._rows, layer, dark)
            else:
                notes.append("the grid and R(l) are drawn for a mask_mod or a BlockMask (this analysis had neither)")
            figures.append(_pictures.growth_figure(self.growth, self.limit_cells, self.full_at, dark))
            hasse, note = _pictures.hasse_figure(self.json["reach"]["limit"].get("hasse"), dark)
        figures.append(hasse)
        notes.append(note)
        return [f for f in figures if f], notes


class ModelReport(Report):
    """`hasseflow.model(...)`: the JSON of `hasseflow model --json` with attributes. `L_star` is
    `full_at`: the layer where every position reaches all it ever can (None: never within the
    model's layers)."""

    @property
    def n(self):
        return self.json["n"]

    @property
    def L_star(self):
        return self.json["full_at"]

    @property
    def full_at(self):
        return self.json["full_at"]

    @property
    def growth(self):
        return list(self.json["growth"])

    @property
    def per_layer(self):
        """Per layer: `layer`, `cells`, `coverage` and the model's own columns (`type`, `lookback`,
        ...); a DataFrame with pandas, else a list of dicts."""
        return _table(_layer_rows(self.growth, self.json["limit_cells"], self.json["per_layer"]))

    @property
    def classes(self):
        return int(self.json["limit"]["classes"])

    def class_members(self):
        """The classes as runs of positions: the compressed Hasse diagram's nodes."""
        raise _native.HasseflowError("class_members(): the model engine keeps classes as runs; read "
                                     "m.json['limit']['hasse']['nodes'] (each node's runs)")

    @property
    def limit(self):
        return Limit(self.n, self.json["limit_cells"], self.classes,
                     why="the model engine keeps the limit as interval rows")

    def row_mask(self, layer):
        """R(layer)[q] as a bool array of the reported rows (`rows=` of `model()`), one row each."""
        n = self.json["n"]
        out = {}
        for q, per_layer in self.json["rows"].items():
            row = np.zeros(n, dtype=bool)
            for lo, hi in per_layer[layer - 1]:
                row[lo:hi + 1] = True
            out[int(q)] = row
        return out

    def _title(self):
        return f"{self.json['name']} ({self.json['model_type']}) at n = {self.json['n']}"

    def _summary(self):
        return f"{self.json['layers']} layers: {self.json['pattern']}. {self.json['verdict']}" + \
            ("; reach crosses documents" if self.json["leaks"] else "")

    def _figures(self, layer, dark):
        j = self.json
        layer = _pictures.default_layer(j["full_at"] or j["layers"]) if layer is None else int(layer)
        if not 1 <= layer <= j["layers"]:
            raise _native.HasseflowError(f"layer = {layer}: the model has layers 1..={j['layers']}")
        figures, notes = [], []
        rerun = self.__dict__.get("_rerun")
        if rerun is not None:
            figures += _pictures.model_reach_figures(j["n"], rerun, sorted({1, layer}), dark)
            figures[0] = ("R(1): the first layer's mask (heatmap of shares)", figures[0][1])
        figures.append(_pictures.growth_figure(j["growth"], j["limit_cells"], j["full_at"], dark))
        hasse, note = _pictures.hasse_figure(j["limit"].get("hasse"), dark)
        notes.append(note if note else j["limit"].get("method"))
        return [f for f in figures + [hasse] if f], notes

    def app_link(self, base=None, layer=None):
        """The Models view's link: this model at this context (and documents, images), showing
        `layer`."""
        link = self.__dict__.get("_link")
        if link is None:
            raise _native.HasseflowError("app_link: this report does not say which model it ran")
        if layer is not None:
            link = {**link, "layer": int(layer)}
        return _app.base_url(base) + "#" + _native.model_fragment(json.dumps(link))


class Derived(Report):
    """`hasseflow.derive(...)`: the derivation report (`hasseflow derive --json`), the merged mask
    (`.mask`), a FlexAttention `.mask_mod` and `.block_mask(device)`."""

    def __init__(self, data, mask_file, design):
        super().__init__(data)
        self.mask_file = json.loads(mask_file)
        self._design = design
        import base64

        n = self.mask_file["n"]
        bits = np.unpackbits(np.frombuffer(base64.b64decode(self.mask_file["packed"]), np.uint8), bitorder="little")
        self.mask = bits[:n * n].reshape(n, n).astype(bool)
        self.labels = self.mask_file.get("labels")
        self._table = None
        self._analysed = None

    @property
    def n(self):
        """Positions of the merged mask (the family's `n` counts tokens: `tokens`; `positions_explained`
        says how one becomes the other)."""
        return self.mask.shape[0]

    @property
    def _analysis(self):
        if self._analysed is None:
            self._analysed = self.analyze()
        return self._analysed

    L_star = property(lambda self: self._analysis.L_star, doc="L* of the merged mask.")
    full_at = property(lambda self: self._analysis.full_at, doc="L* of the merged mask.")
    growth = property(lambda self: self._analysis.growth, doc="|R(l)| of the merged mask by layer.")
    per_layer = property(lambda self: self._analysis.per_layer, doc="The merged mask's per-layer table.")
    classes = property(lambda self: self._analysis.classes, doc="Classes of the merged mask's limit.")
    limit = property(lambda self: self._analysis.limit, doc="The merged mask's limit (`Limit`).")

    def class_members(self):
        return self._analysis.class_members()

    @property
    def tokens(self):
        """The family's `n`: tokens of one sample."""
        return self.json["sample_tokens"]

    @property
    def positions_explained(self):
        """How the family's n tokens become the merged mask's positions: its streams, in order (runs
        of positions of one kind: token copies `w_i`, mask tokens `m@i`, aggregates `w'_i`), and the
        tokens no position holds."""
        import re

        labels = list(self.json["positions"])
        kinds = {"w": "token copies", "m": "mask tokens", "a": "aggregates of neighbours"}
        streams = []  # (kind, [names]): a new stream where the kind changes or the index stops rising
        last = None
        for lab in labels:
            k = "m" if lab.startswith("m@") else "a" if lab.startswith("w'") else "w"
            name = lab.split("[")[0]
            index = int(re.findall(r"\d+", name)[0]) if re.findall(r"\d+", name) else 0
            if streams and streams[-1][0] == k and last is not None and index > last:
                streams[-1][1].append(name)
            else:
                streams.append((k, [name]))
            last = index
        parts, i = [], 0
        while i < len(streams):
            j = i
            while j + 1 < len(streams) and streams[j + 1][0] == streams[i][0]:
                j += 1
            k, group = streams[i][0], [names for _, names in streams[i:j + 1]]
            if len(group) == 1:
                parts.append(f"{len(group[0])} {kinds[k]} ({group[0][0]}..{group[0][-1]})")
            else:
                parts.append(f"{len(group)} streams of {kinds[k]} ({' + '.join(str(len(g)) for g in group)})")
            i = j + 1
        held = {lab.split("[")[0] for lab in labels if lab.startswith("w_")}
        unused = [f"w_{i}" for i in range(self.tokens) if f"w_{i}" not in held]
        text = f"{self.tokens} tokens -> {len(labels)} positions: " + " + ".join(parts)
        if unused:
            text += f"; {', '.join(unused)} held by no position (no task reads it)"
        return text

    @property
    def mask_mod(self):
        """The merged mask as a FlexAttention mask_mod: a function looking the cell up in a bool
        tensor (the same function on every call)."""
        if self._table is None:
            import torch

            table = torch.from_numpy(self.mask.copy())

            def derived_mask_mod(b, h, q_idx, kv_idx):
                return table[q_idx, kv_idx]

            self._table = derived_mask_mod
        return self._table

    def block_mask(self, device="cpu", block_size=128):
        """The merged mask as a FlexAttention BlockMask (`create_block_mask` on `mask_mod`)."""
        from torch.nn.attention.flex_attention import create_block_mask

        return create_block_mask(self.mask_mod, None, None, self.n, self.n, device=device, BLOCK_SIZE=block_size)

    def analyze(self):
        """The merged mask's analysis (`hasseflow.analyze(self.mask)`)."""
        from . import analyze

        return analyze(self.mask, labels=self.labels)

    def app_link(self, base=None):
        """The app's Designer link for this family (built-in families, any n), else the merged
        mask's share link."""
        if self._design is not None:
            return _app.base_url(base) + "#" + self._design
        return self.analyze().app_link(base)

    def _title(self):
        return "hasseflow derivation"

    def _summary(self):
        return f"{self.positions_explained}; merged mask with {int(self.mask.sum())} entries"

    def _figures(self, layer, dark):
        return self.analyze()._figures(layer, dark)
