#!/usr/bin/env python3
"""Layer semantics from the real `transformers.masking_utils`.

Evaluates the library's own mask functions (causal, sliding causal, chunked causal, chunked
overlay, bidirectional, sliding bidirectional, packed sequences through
`remap_positions_for_packed_sequence` + `packed_sequence_mask_function`, as `create_causal_mask`
composes them) on index grids, and writes the boolean masks, one string per row ('1' = the query
reads the key, '.' = not), to crates/core/tests/fixtures/hf_layer_semantics.json together with the
hasseflow rule layer (`hasseflow_core::reach::RuleLayer`, serde form) that must build the same
mask. `crates/core/tests/reach.rs` checks the Rust dense builder against every case.

Usage:
    python tests/python/gen_layer_semantics.py           # (re)write the fixture
    python tests/python/gen_layer_semantics.py --check   # regenerate in memory, compare, exit 1 on a difference
"""

import json
import sys
from pathlib import Path

import torch
import transformers
from transformers import masking_utils as mu

from tally import compare_fixture

FIXTURE = Path(__file__).resolve().parents[2] / "crates/core/tests/fixtures/hf_layer_semantics.json"


def grid(fn, n):
    """The mask fn(b=0, h=0, q, k) on the n x n index grid, as row strings."""
    q = torch.arange(n).view(n, 1)
    k = torch.arange(n).view(1, n)
    b = torch.tensor(0)
    h = torch.tensor(0)
    m = fn(b, h, q, k) & torch.ones(n, n, dtype=torch.bool)
    return ["".join("1" if x else "." for x in row) for row in m.tolist()]


def packed(fn, docs):
    """`fn` over packed documents, as create_causal_mask composes it: positions restart per document
    (remap_positions_for_packed_sequence), then AND packed_sequence_mask_function."""
    ids, pos = [], []
    for d, length in enumerate(docs):
        ids += [d] * length
        pos += list(range(length))
    seq = torch.tensor([ids])
    position_ids = torch.tensor([pos])
    remapped = mu.remap_positions_for_packed_sequence(fn, position_ids)
    return mu.and_masks(remapped, mu.packed_sequence_mask_function(seq))


def rule(kind, causal, docs=()):
    return {
        "kind": kind,
        "causal": causal,
        "overlays": {"docs": list(docs), "sinks": 0, "globals": [], "prefix": 0},
    }


def cases():
    zero = torch.zeros(1, dtype=torch.long)
    out = []

    def add(name, function, n, fn, layer):
        out.append({"name": name, "function": function, "n": n, "layer": layer, "rows": grid(fn, n)})

    add("causal", "causal_mask_function", 9, mu.causal_mask_function, rule({"type": "full"}, True))
    add("bidirectional", "bidirectional_mask_function", 7, mu.bidirectional_mask_function, rule({"type": "full"}, False))
    for w in (1, 3, 7):
        add(f"sliding causal w={w}", f"sliding_window_causal_mask_function({w})", 12,
            mu.sliding_window_causal_mask_function(w), rule({"type": "sliding", "window": w}, True))
    for c in (1, 4, 5):
        add(f"chunked causal c={c}", f"chunked_causal_mask_function({c}, left_padding=0)", 12,
            mu.chunked_causal_mask_function(c, zero), rule({"type": "chunked", "size": c}, True))
    add("chunked bidirectional c=4", "chunked_overlay(4, left_padding=0)", 11,
        mu.chunked_overlay(4, zero), rule({"type": "chunked", "size": 4}, False))
    for w in (1, 3):
        # transformers' bidirectional overlay(w) is |q - k| <= w: LayerKind::Sliding { window: w + 1 }.
        add(f"sliding bidirectional w={w}", f"sliding_window_bidirectional_mask_function({w})", 12,
            mu.sliding_window_bidirectional_mask_function(w), rule({"type": "sliding", "window": w + 1}, False))
    docs = [5, 3, 6]
    add("packed causal", "and(remap(causal_mask_function), packed_sequence_mask_function)", 14,
        packed(mu.causal_mask_function, docs), rule({"type": "full"}, True, docs))
    add("packed sliding causal w=2", "and(remap(sliding_window_causal_mask_function(2)), packed_sequence_mask_function)",
        14, packed(mu.sliding_window_causal_mask_function(2), docs), rule({"type": "sliding", "window": 2}, True, docs))
    add("packed chunked causal c=2", "and(remap(chunked_causal_mask_function(2, 0)), packed_sequence_mask_function)",
        14, packed(mu.chunked_causal_mask_function(2, zero), docs), rule({"type": "chunked", "size": 2}, True, docs))
    add("packed bidirectional", "and(remap(bidirectional_mask_function), packed_sequence_mask_function)", 14,
        packed(mu.bidirectional_mask_function, docs), rule({"type": "full"}, False, docs))
    return out


def document():
    return {
        "source": "transformers.masking_utils",
        "transformers": transformers.__version__,
        "torch": torch.__version__.split("+")[0],
        "cases": cases(),
    }


def main():
    doc = document()
    if "--check" in sys.argv[1:]:
        committed = json.loads(FIXTURE.read_text())
        if committed.get("transformers") != doc["transformers"]:
            print(f"note: fixture from transformers {committed.get('transformers')}, installed {doc['transformers']}")
        sys.exit(compare_fixture(doc["cases"], committed["cases"], "the installed library's mask differs from the fixture"))
    FIXTURE.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {FIXTURE} ({len(doc['cases'])} cases, transformers {doc['transformers']})")


if __name__ == "__main__":
    main()
