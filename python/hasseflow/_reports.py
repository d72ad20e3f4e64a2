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


class Report:
    """A report of the core: every field of the CLI's JSON object is an attribute (`r.growth`,
    `r.full_at`, ...) and `r.json` is the object itself."""

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
    def L_star(self):
        return self.json["depth"]

    @property
    def growth(self):
        return self.json["growth"] if self.engine == "dense" else self.json["reach"]["growth"]

    @property
    def n(self):
        return self.json["n"] if self.engine == "dense" else self.json["reach"]["n"]

    @property
    def full_at(self):
        return self.json["depth"] if self.engine == "dense" else self.json["reach"]["full_at"]

    @property
    def shortfall(self):
        return None if self.engine == "dense" else self.json["reach"]["shortfall"]

    @property
    def limit_cells(self):
        if self.engine == "dense":
            return int(self.limit.sum())
        return self.json["reach"]["limit_cells"]

    @property
    def limit(self):
        """The limit R(L*) as an (n, n) bool array (dense runs); the structured report's
        `reach["limit"]` describes its order structure instead."""
        if self._limit_words is None:
            return None
        return mask_of_words(self._limit_words, self.json["n"])

    @property
    def classes(self):
        if self.engine == "dense":
            return self.json["classes"]
        return self.json["reach"]["limit"]["classes"]

    @property
    def hasse_edges(self):
        if self.engine == "dense":
            return self.json["hasse_edges"]
        h = self.json["reach"]["limit"].get("hasse")
        return None if h is None else [[e["lower"], e["upper"]] for e in h["edges"]]

    @property
    def per_layer(self):
        """The per-layer table: layer, cells |R(l)|, coverage of the limit (a DataFrame with pandas)."""
        g = self.growth
        limit = max(1, self.limit_cells)
        if self.engine == "dense":
            rows = [{"layer": l, "cells": c, "coverage": c / limit} for l, c in enumerate(g)]
        else:
            rows = [{"layer": 0, "cells": g[0], "coverage": g[0] / limit}]
            for lay in self.json["reach"]["layers"]:
                rows.append({"layer": lay["layer"], "cells": lay["cells"], "coverage": lay["cells"] / limit,
                             "lookback": lay["lookback"], "queries_short": lay["queries_short"]})
        return _table(rows)

    @property
    def table(self):
        """The per-layer table (`per_layer`)."""
        return self.per_layer

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
        return f"n = {self.n}, L* = {depth}, classes = {self.classes}" if not isinstance(self.classes, list) \
            else f"n = {self.n}, L* = {depth}, {len(self.classes)} classes, {len(self.hasse_edges)} Hasse edges"

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
    def L_star(self):
        return self.json["full_at"]

    @property
    def table(self):
        """The per-layer table (`per_layer`): a DataFrame with pandas, else a list of dicts."""
        return _table(self.json["per_layer"])

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

    @property
    def n(self):
        return self.mask.shape[0]

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
        return f"{self.n} positions; merged mask with {int(self.mask.sum())} entries"

    def _figures(self, layer, dark):
        return self.analyze()._figures(layer, dark)
