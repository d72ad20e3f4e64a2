"""Pictures of results for notebooks (`_repr_html_`) and for `.show()`: the mask grid, R(l) shaded
by first-reach layer (the app's grid), the growth plot and the compressed Hasse diagram, each
drawn by the Rust render crate (hasseflow._native); at real lengths the grids are heatmaps of
shares, as the app's Models view draws them. This module only chooses what to draw and lays the
drawings out on a page."""

import hashlib
import html
import os
import sys
import tempfile
import webbrowser

from . import _native
from ._inputs import words_of


def default_layer(depth):
    """The layer R(l) is drawn at when none is asked: half way to the limit (at least 1), where
    growth is still visible."""
    return max(1, (int(depth or 1) + 1) // 2)


class Picture:
    """A result's pictures: `figures` as `(caption, SVG)` pairs and `notes` (sentences about what
    is not drawn). Displays inline in a notebook; `.show()` opens it elsewhere; `.save(path)`
    writes it as an HTML page."""

    def __init__(self, title, summary, figures, notes=()):
        self.title = title
        self.summary = summary
        self.figures = [(c, s) for c, s in figures if s]
        self.notes = [n for n in notes if n]

    @property
    def svgs(self):
        """The drawings, as SVG documents."""
        return [s for _, s in self.figures]

    def _repr_html_(self):
        parts = [f"<div><b>{html.escape(self.title)}</b><br>{html.escape(self.summary)}</div>"]
        for caption, svg in self.figures:
            cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
            parts.append("<figure style='display:inline-block;vertical-align:top;margin:4px'>"
                         f"{svg}{cap}</figure>")
        parts.extend(f"<p>{html.escape(n)}</p>" for n in self.notes)
        return "\n".join(parts)

    def _repr_svg_(self):
        return self.svgs[0] if self.svgs else None

    def page(self):
        """The pictures as a standalone HTML page."""
        return (f"<!doctype html><html lang='en'><meta charset='utf-8'><title>{html.escape(self.title)}</title>"
                f"<body style='font-family:system-ui,sans-serif'>{self._repr_html_()}</body></html>")

    def save(self, path):
        """Writes the page to `path`; returns the path."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.page())
        return path

    def show(self):
        """Shows the pictures: inline in a notebook; else writes them to an HTML file, opens it in a
        browser when one opens, and otherwise prints the file's path. Returns the path (None
        inline)."""
        try:
            from IPython import get_ipython
            from IPython.display import HTML, display

            shell = get_ipython()
            if shell is not None and type(shell).__name__ != "TerminalInteractiveShell":
                display(HTML(self._repr_html_()))
                return None
        except ImportError:
            pass
        page = self.page()
        name = "hasseflow-" + hashlib.sha1(page.encode()).hexdigest()[:12] + ".html"
        path = os.path.join(tempfile.gettempdir(), name)
        self.save(path)
        if not open_in_browser("file://" + path):
            print(f"hasseflow: no browser opened here; the pictures are in {path}")
        return path


def has_display():
    """Whether a graphical browser can open: macOS, Windows, a display on Linux, or $BROWSER."""
    if os.environ.get("BROWSER"):
        return True
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_in_browser(url):
    """Opens `url` in a graphical browser if there is one; False when none opened (a text
    browser is never started: it would take over the terminal)."""
    if not has_display():
        return False
    try:
        return bool(webbrowser.open(url))
    except webbrowser.Error:
        return False


def growth_figure(growth, limit_cells, full_at, dark=False):
    return ("growth: |R(l)| / |limit| by layer",
            _native.growth_picture([int(g) for g in growth], int(limit_cells), full_at, dark))


def dense_figures(mask, layer, dark=False):
    """The grid of a dense mask and R(layer) by first-reach layer (heatmaps above 256 a side)."""
    n = mask.shape[0]
    grid, reach, _ = _native.mask_pictures(words_of(mask), n, [layer], dark)
    return [("the mask: row q reads column k", grid), (f"R({layer}): what each query has reached after "
                                                      f"{layer} layer{'s' if layer != 1 else ''}", reach[0])]


def rows_figures(rows, layer, dark=False):
    """The grid and R(layer) of a mask given as interval rows `(n, offsets, spans)` (or as a
    function of the layers giving the pictures), as heatmaps of sampled queries."""
    if callable(rows):
        grid, reach = rows([layer], dark)
    else:
        n, offsets, spans = rows
        grid, reach = _native.rows_pictures(n, offsets, spans, [layer], dark)
    return [("the mask (heatmap of shares)", grid), (f"R({layer}) (heatmap of shares)", reach[0])]


def order_figure(classes, edges, labels=None, dark=False):
    """The compressed Hasse diagram of a dense order: `(figure or None, note)`."""
    svg, note = _native.order_picture(classes, [tuple(e) for e in edges],
                                      None if labels is None else [str(x) for x in labels], dark)
    return (("the limit's order: compressed Hasse diagram", svg) if svg else None), note


def hasse_figure(hasse, dark=False):
    """The compressed Hasse diagram of a structured or model report's `limit.hasse`."""
    import json

    if hasse is None:
        return None, None
    svg, note = _native.hasse_picture(json.dumps(hasse), dark)
    return (("the limit's order: compressed Hasse diagram", svg) if svg else None), note


def model_reach_figures(n, rows_of, layers, dark=False):
    """Heatmaps of R(l) of a model at real length: `rows_of(queries)` gives, per query, the
    intervals of each layer (the report's `rows`)."""
    queries = _native.heat_queries(int(n))
    rows = rows_of(queries)
    out = []
    for l in layers:
        per_query = [[tuple(iv) for iv in rows[str(q)][l - 1]] for q in queries]
        title = f"R({l}), one query a row: share of each block's keys reached"
        out.append((f"R({l}) (heatmap of shares)", _native.heat_picture(int(n), per_query, title, dark)))
    return out
