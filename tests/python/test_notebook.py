#!/usr/bin/env python3
"""Runs examples/hasseflow.ipynb end to end with nbclient (the venv's ipykernel) and checks its
outputs: no cell raised, every code cell ran, the pictures are there (the Hasse diagrams, growth
plots and the measurement grid as SVG in the HTML outputs), and the figures the text promises
(the BlockMask route agrees, the broken packing leaks). The executed notebook is written to
target/notebook/hasseflow.ipynb.

Prints one line per failure and ends with "N passed, M failed"; exits non-zero on any failure.
"""

import os
import sys

import nbformat
from nbclient import NotebookClient

from tally import Tally

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
T = Tally()


def main():
    path = os.path.join(ROOT, "examples", "hasseflow.ipynb")
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": ROOT}})
    try:
        client.execute()
    except Exception as e:
        T.check(False, f"the notebook ran: {type(e).__name__}: {str(e).splitlines()[-1] if str(e) else ''}")
    out_dir = os.path.join(ROOT, "target", "notebook")
    os.makedirs(out_dir, exist_ok=True)
    nbformat.write(nb, os.path.join(out_dir, "hasseflow.ipynb"))
    code = [c for c in nb.cells if c.cell_type == "code"]
    T.check(all(c.get("execution_count") for c in code), f"every code cell ran ({len(code)} cells)")
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    T.check(not errors, f"no cell raised ({[e.get('ename') for e in errors]})")
    html = [o["data"]["text/html"] for c in code for o in c.get("outputs", [])
            if o.get("output_type") in ("execute_result", "display_data") and "text/html" in o.get("data", {})]
    svgs = sum(h.count("<svg") for h in html)
    T.check(svgs >= 9, f"the outputs carry the pictures ({svgs} SVG drawings in {len(html)} HTML outputs)")
    text = "".join(o.get("text", "") for c in code for o in c.get("outputs", []) if o.get("output_type") == "stream")
    T.check("BlockMask route agrees: True" in text, "the BlockMask route agrees with the callable route")
    T.check("cross-document cells: 0" not in text and "cross-document cells:" in text,
            "the broken packing shows its cross-document cells")
    T.check(any("measured, not predicted" in h for h in html), "the measurement grid has its legend")
    caps = "".join(html)
    T.check(all(f"<figcaption>R({l}): what each query has reached" in caps for l in (2, 6)),
            "the sliding window at n = 128: R(l) by first-reach layer at two layers")
    T.check(all(f"<figcaption>R({l}) (heatmap of shares)" in caps for l in (4, 32)) and "n = 131072" in caps,
            "the sliding window at n = 131072: heatmaps of R(l) at two layers")
    T.check(caps.count("compressed Hasse diagram</figcaption>") >= 2 and "(one chain: a total order)" in caps,
            "Block Two-Stream and Butterfly draw their compressed Hasse diagrams; a window's chain is a sentence")
    T.check(text.count("#design=") >= 2 and "#model=" in text and "#n=128&m=" in text,
            "the app links of the short window, the derivations and the model")
    T.check("app_link: the app's editor opens masks up to n = 512" in text, "the long window's link is refused, saying why")
    T.check("first leak (layer, q, k): (1, 1024, " in text,
            "the leak at real length (n = 4096) is found and named at the second document's first position")
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
