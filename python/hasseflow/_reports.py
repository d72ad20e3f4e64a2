"""Result objects: the core's JSON reports (the CLI's `--json` schema) with attributes, tables,
pictures for notebooks (the render crate's SVG) and links to the web app."""

import html
import json
import webbrowser

import numpy as np

from . import _native
from ._inputs import mask_of_words, words_of

# The web app (`./scripts/serve.sh`); pass base= to app_link for a deployed copy.
APP_URL = "http://127.0.0.1:8080/"
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

    def _repr_html_(self):
        parts = [f"<div><b>{html.escape(self._title())}</b><br>{html.escape(self._summary())}</div>"]
        for svg in self._pictures():
            parts.append(f"<div style='display:inline-block;vertical-align:top;margin:4px'>{svg}</div>")
        return "\n".join(parts)

    def _repr_svg_(self):
        pics = self._pictures()
        return pics[0] if pics else None

    def show(self):
        """Shows the pictures: inline in a notebook, else in a browser window (a temporary HTML file)."""
        try:
            from IPython import get_ipython
            from IPython.display import HTML, display

            if get_ipython() is not None:
                display(HTML(self._repr_html_()))
                return
        except ImportError:
            pass
        import tempfile

        with tempfile.NamedTemporaryFile("w", suffix=".html", delete=False) as f:
            f.write(f"<!doctype html><meta charset='utf-8'><title>hasseflow</title>{self._repr_html_()}")
        webbrowser.open("file://" + f.name)

    def __repr__(self):
        return f"<{type(self).__name__} {self._summary()}>"

    def _title(self):
        return type(self).__name__

    def _summary(self):
        return ""

    def _pictures(self):
        return []


def _compressed(classes, edges, max_nodes=160):
    """Collapses chains (a node whose only cover has it as its only lower cover) for drawing a large
    diagram: classes as one node per chain, captions as position ranges."""
    if len(classes) <= max_nodes:
        return classes, edges, None
    up = [[] for _ in classes]
    down = [[] for _ in classes]
    for a, z in edges:
        up[a].append(z)
        down[z].append(a)
    head = {}
    order = []
    for c in range(len(classes)):
        if len(down[c]) == 1 and len(up[down[c][0]]) == 1:
            head[c] = head[down[c][0]]
        else:
            head[c] = c
            order.append(c)
    index = {c: i for i, c in enumerate(order)}
    members = [[] for _ in order]
    for c in range(len(classes)):
        members[index[head[c]]].extend(classes[c])
    new_edges = sorted({(index[head[a]], index[head[z]]) for a, z in edges if head[a] != head[z]})
    labels = []
    for m in members:
        m = sorted(m)
        labels.append(str(m[0]) if len(m) == 1 else f"{m[0]}–{m[-1]} ({len(m)})")
    return [[i] for i in range(len(order))], new_edges, labels


def hasse_picture(classes, edges, labels=None):
    classes, edges, node_labels = _compressed(classes, edges)
    if node_labels is not None:
        labels = node_labels
    elif labels is not None:
        labels = list(labels)
    return _native.hasse_svg(classes, [tuple(e) for e in edges], labels)


class Analysis(Report):
    """`hasseflow.analyze(...)`: the dense report (`engine == "dense"`) or the structured engine's
    (`engine == "structured"`, long sequences). `L_star` is the CLI's `depth`: the layer at which
    every position reaches all it ever will (None when a structured run is too shallow)."""

    def __init__(self, data, limit_words=None, mask=None, notes=(), link_mask=None, labels=None):
        super().__init__(data)
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

    def app_link(self, base=APP_URL):
        """The web app's share link for this mask (the app opens masks up to n = 512)."""
        if self._link_mask is None:
            raise _native.HasseflowError("app_link: this analysis has no dense mask to share")
        m = self._link_mask
        if m.shape[0] > APP_MAX_N:
            raise _native.HasseflowError(f"app_link: n = {m.shape[0]} is above the app's editor limit {APP_MAX_N}")
        return base + "#" + _native.share_fragment(words_of(m), m.shape[0], self._labels)

    def _title(self):
        return f"hasseflow analysis ({self.engine} engine)"

    def _summary(self):
        lstar = self.L_star
        depth = "not reached" if lstar is None else str(lstar)
        return f"n = {self.n}, L* = {depth}, classes = {self.classes}" if not isinstance(self.classes, list) \
            else f"n = {self.n}, L* = {depth}, {len(self.classes)} classes, {len(self.hasse_edges)} Hasse edges"

    def _pictures(self):
        pics = []
        if self.engine == "dense":
            pics.append(hasse_picture(self.json["classes"], self.json["hasse_edges"], self._labels))
            pics.append(_native.growth_picture(self.growth, self.limit_cells, self.L_star))
        else:
            h = self.json["reach"]["limit"].get("hasse")
            if h is not None and h["nodes"]:
                ids = {node["id"]: i for i, node in enumerate(h["nodes"])}
                edges = [(ids[e["lower"]], ids[e["upper"]]) for e in h["edges"] if e["lower"] in ids and e["upper"] in ids]
                pics.append(_native.hasse_svg([[i] for i in range(len(ids))], edges, [x["label"] for x in h["nodes"]]))
            pics.append(_native.growth_picture(self.growth, self.limit_cells, self.full_at))
        return pics


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

    def _pictures(self):
        pics = []
        h = self.json["limit"].get("hasse")
        if h is not None and h["nodes"]:
            ids = {node["id"]: i for i, node in enumerate(h["nodes"])}
            edges = [(ids[e["lower"]], ids[e["upper"]]) for e in h["edges"] if e["lower"] in ids and e["upper"] in ids]
            pics.append(_native.hasse_svg([[i] for i in range(len(ids))], edges, [x["label"] for x in h["nodes"]]))
        pics.append(_native.growth_picture(self.json["growth"], self.json["limit_cells"], self.json["full_at"]))
        return pics


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

    def app_link(self, base=APP_URL):
        """The app's Designer link for this family (built-in families), else the mask's share link."""
        if self._design is not None:
            return base + "#" + self._design
        return self.analyze().app_link(base)

    def _title(self):
        return "hasseflow derivation"

    def _summary(self):
        return f"{self.n} positions; merged mask with {int(self.mask.sum())} entries"

    def _pictures(self):
        return self.analyze()._pictures()
