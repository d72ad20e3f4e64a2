#!/usr/bin/env python3
"""The pictures, `.show()`, `app_link()` and `hasseflow.app()` of the Python package (issue 32):
R(l) by first-reach layer against a NumPy oracle, heatmaps of shares at real length, the
compressed Hasse diagram (chains as one node with their length, bounded in size), `.show()` on a
machine with no browser, every result's link read back by the core's codec, and the bundled app
served by the standard library (with the release bundle: HASSEFLOW_APP_DIR=dist-release, as
scripts/test.sh runs it after release.sh; the served page and its wasm are fetched).

Prints one line per failure and ends with "N passed, M failed"; exits non-zero on any failure.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.request

import numpy as np

import hasseflow
from hasseflow import HasseflowError, _native
from tally import Tally

T = Tally()
# The app's "new at this layer" colour (Okabe-Ito vermillion, the render crate's light palette).
NEW_CELL = "#d55e00"


def window_of(w):
    def window(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx < w)
    return window


def window_128(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx < 128)


def first_reach(mask):
    """D[q][k]: the first layer whose reach holds (q, k), by boolean matrix powers (the oracle)."""
    n = mask.shape[0]
    a = mask | np.eye(n, dtype=bool)
    d = np.full((n, n), -1)
    d[np.eye(n, dtype=bool)] = 0
    r = np.eye(n, dtype=bool)
    for layer in range(1, n + 1):
        nxt = (a.astype(np.int32) @ r.astype(np.int32) > 0) | r
        d[nxt & ~r] = layer
        if (nxt == r).all():
            break
        r = nxt
    return d


def rects(svg, fill):
    """(x, y, width) of the rectangles filled with `fill`."""
    pat = r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="[\d.]+" fill="' + re.escape(fill) + '"/>'
    return [tuple(float(v) for v in m) for m in re.findall(pat, svg)]


def dense_pictures():
    n, w = 128, 16
    r = hasseflow.analyze(window_of(w), n=n)
    d = first_reach(r.mask)
    T.check(r.L_star == d.max(), f"oracle: L* = {r.L_star} equals the NumPy first-reach depth {d.max()}")
    for layer in (2, 5):
        pic = r.picture(layer=layer)
        caps = [c for c, _ in pic.figures]
        T.check(any(c.startswith(f"R({layer})") for c in caps) and any("mask" in c for c in caps)
                and any("growth" in c for c in caps), f"picture(layer={layer}): the grid, R(l) and the growth ({caps})")
        svg = dict(pic.figures)[next(c for c in caps if c.startswith(f"R({layer})"))]
        px = 512 / n
        drawn = sum(wd for _, _, wd in rects(svg, NEW_CELL)) / px
        T.check(round(drawn) == int((d == layer).sum()),
                f"R({layer}): {drawn:.0f} cells drawn new at layer {layer}; the oracle has {(d == layer).sum()}")
    pic = r.picture()
    T.check(not any("Hasse" in c for c, _ in pic.figures) and any("0–127 (128)" in n_ and "total order" in n_
                                                                 for n_ in pic.notes),
            f"a sliding window's limit is one chain: no diagram, a sentence ({pic.notes})")
    T.check(r._repr_html_().count("<svg") == 3 and r._repr_svg_().startswith("<svg"), "rich display: three pictures")


def long_pictures():
    n = 1 << 17
    r = hasseflow.analyze(window_128, n=n, layers=8)
    pic1, pic8 = r.picture(layer=1), r.picture(layer=8)
    s1 = dict(pic1.figures)["R(1) (heatmap of shares)"]
    s8 = dict(pic8.figures)["R(8) (heatmap of shares)"]
    grid = dict(pic1.figures)["the mask (heatmap of shares)"]
    T.check(all(len(s) < 150_000 for s in (s1, s8, grid)), f"heatmaps stay small ({len(s1)}, {len(s8)} bytes)")
    # Display columns of 512 keys: R(1) reaches 128 keys (a quarter of a column, or two
    # partial ones), R(8) 8 · 127 + 1 = 1017 (about two columns): more coloured cells.
    T.check(s1.count("<rect") < s8.count("<rect") and "share of the cell's keys" in s1,
            f"R(8) covers more than R(1) ({s1.count('<rect')} < {s8.count('<rect')} rectangles)")
    ok = True
    try:
        r.picture(layer=100_000)
    except HasseflowError as e:
        ok = "above" in str(e)
    T.check(ok, "a layer past the picture's limit is a HasseflowError")


def hasse_pictures():
    for family, params in (("block", {"n": 8, "block": 2}), ("butterfly", {"n": 8})):
        d = hasseflow.derive(family, **params)
        pic = d.picture()
        hasse = [s for c, s in pic.figures if "Hasse" in c]
        T.check(len(hasse) == 1, f"{family}: the compressed Hasse diagram is drawn ({pic.notes})")
        if not hasse:
            continue
        svg = hasse[0]
        width = float(re.search(r'width="([\d.]+)"', svg).group(1))
        height = float(re.search(r'height="([\d.]+)"', svg).group(1))
        titles = re.findall(r"<title>([^<]*)</title>", svg)
        sizes = [int(m.group(1)) if (m := re.search(r"\((\d+)\)$", t)) else 1 for t in titles]
        T.check(sum(sizes) == d.n and width <= 760.5 and height <= 560.5,
                f"{family}: {len(titles)} nodes hold all {d.n} positions ({sum(sizes)}); {width:.0f} x {height:.0f} px")
    causal = hasseflow.analyze(np.tril(np.ones((4096, 4096), dtype=bool)))
    pic = causal.picture()
    T.check(not any("Hasse" in c for c, _ in pic.figures) and any("0–4095 (4096)" in x for x in pic.notes),
            "causal at 4096: one chain node, stated, not a collapsed box")


def show_without_a_browser():
    code = ("import hasseflow, numpy as np\n"
            "p = hasseflow.analyze(np.tril(np.ones((6, 6), dtype=bool))).show()\n"
            "print('RETURNED', p)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    m = re.search(r"the pictures are in (\S+)", out.stdout)
    path = m.group(1) if m else None
    ok = path is not None and os.path.isfile(path) and "<svg" in open(path, encoding="utf-8").read()
    T.check(ok and f"RETURNED {path}" in out.stdout, f"show() on a headless machine writes and names a file "
                                                   f"({out.stdout.strip()!r} {out.stderr.strip()[-200:]!r})")


def links():
    base = "http://example.test/app/"
    r = hasseflow.analyze(window_of(3), n=12)
    kind, data = _native.read_fragment(r.app_link(base))
    mask = hasseflow.analyze(json.loads(data)).mask
    T.check(kind == "mask" and np.array_equal(mask, r.mask), "analysis link: the core reads back the mask")
    try:
        hasseflow.analyze(window_of(3), n=600).app_link(base)
        T.check(False, "a mask above the editor's 512 is refused")
    except HasseflowError as e:
        T.check("up to n = 512" in str(e), f"a mask above the editor's 512 is refused: {e}")
    d = hasseflow.derive("butterfly", n=600)
    kind, data = _native.read_fragment(d.app_link(base))
    spec = json.loads(data)
    T.check(kind == "design" and (spec["family"], spec["n"]) == ("butterfly", 600),
            f"derive link at n = 600 (above the editor's 512): the family and its options ({data})")
    m = hasseflow.model("gemma-3-27b-it", context=131072, documents=[65536, 65536])
    kind, data = _native.read_fragment(m.app_link(base, layer=3))
    T.check(kind == "model" and json.loads(data) == {"gallery": "gemma-3-27b-it", "n": 131072,
                                                     "documents": [65536, 65536], "layer": 3},
            f"model link: the Models view's model, context, documents, layer ({data})")
    import transformers

    conf = transformers.MistralConfig(num_hidden_layers=2, sliding_window=64)
    kind, data = _native.read_fragment(hasseflow.model(conf, context=1 << 20).app_link(base))
    link = json.loads(data)
    T.check(kind == "model" and link["n"] == 1 << 20 and json.loads(link["config"])["sliding_window"] == 64,
            "model link from a config: the config's text travels (n = 2^20)")
    m_pic = m.picture(layer=2)
    T.check([c for c, _ in m_pic.figures][:2] == ["R(1): the first layer's mask (heatmap of shares)",
                                                  "R(2) (heatmap of shares)"],
            f"model pictures: R(1) and R(layer) as heatmaps ({[c for c, _ in m_pic.figures]})")
    os.environ["HASSEFLOW_APP_URL"] = "https://hosted.test/hasseflow"
    T.check(hasseflow.app() == "https://hosted.test/hasseflow/" and
            d.app_link().startswith("https://hosted.test/hasseflow/#design="), "HASSEFLOW_APP_URL names a hosted copy")
    del os.environ["HASSEFLOW_APP_URL"]


def served_app():
    bundle = os.environ.get("HASSEFLOW_APP_DIR")
    with tempfile.TemporaryDirectory() as empty:
        os.environ["HASSEFLOW_APP_DIR"] = empty
        saved = hasseflow._app._PACKAGE_DIR, hasseflow._app._CHECKOUT_DIR
        hasseflow._app._PACKAGE_DIR = hasseflow._app._CHECKOUT_DIR = empty
        try:
            hasseflow.app()
            T.check(False, "no bundle: app() says what to do")
        except HasseflowError as e:
            T.check("HASSEFLOW_APP_URL" in str(e) and "bundle_app.sh" in str(e), f"no bundle: app() says what to do")
        hasseflow._app._PACKAGE_DIR, hasseflow._app._CHECKOUT_DIR = saved
    if bundle is None:
        os.environ.pop("HASSEFLOW_APP_DIR", None)
    else:
        os.environ["HASSEFLOW_APP_DIR"] = bundle
    folder = hasseflow._app.bundle_dir()
    T.check(folder is not None, f"a release bundle is found (HASSEFLOW_APP_DIR={bundle}, the package, the checkout)")
    if folder is None:
        return
    url = hasseflow.app()
    T.check(hasseflow.app() == url and url.startswith("http://127.0.0.1:"), f"app() serves once, on a local port: {url}")
    page = urllib.request.urlopen(url, timeout=10).read().decode()
    wasm = [f for f in os.listdir(folder) if f.endswith(".wasm")]
    head = urllib.request.urlopen(url + wasm[0], timeout=10) if wasm else None
    T.check("<html" in page.lower() and head is not None and head.headers["Content-Type"] == "application/wasm",
            "the served page and its wasm (application/wasm)")
    link = hasseflow.derive("block", n=8, block=2).app_link()
    T.check(link.startswith(url + "#design="), "links point at the served app")
    # The served app opens links in headless Chromium (the e2e tests' browser): the editor's
    # statistics of a 12-position causal mask, the Models view for a model link.
    causal = hasseflow.analyze(np.tril(np.ones((12, 12), dtype=bool)))
    dom = rendered(causal.app_link())
    T.check('id="stat-n">12<' in dom and 'id="stat-classes">12<' in dom and 'id="stat-edges">11<' in dom,
            "the served app opens an analysis link: N = 12, 12 classes, 11 Hasse edges")
    dom = rendered(hasseflow.model("gemma-3-27b-it", context=65536).app_link(layer=3))
    T.check('id="tab-models" role="tab" aria-selected="true"' in dom and "damaged" not in dom,
            "the served app opens a model link in the Models view")


def rendered(url):
    """The DOM of `url` after the app ran (headless Chromium, 15 s of virtual time)."""
    out = subprocess.run([os.environ.get("CHROMIUM", "/usr/bin/chromium"), "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=15000",
                          "--dump-dom", url], capture_output=True, text=True, timeout=180)
    return out.stdout


def main():
    dense_pictures()
    long_pictures()
    hasse_pictures()
    show_without_a_browser()
    links()
    served_app()
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
