#!/usr/bin/env python3
"""Layer semantics from the real `transformers.masking_utils`.

Evaluates the library's own mask functions (causal, sliding causal, chunked causal, chunked
overlay, bidirectional, sliding bidirectional, packed sequences through
`remap_positions_for_packed_sequence` + `packed_sequence_mask_function`, as `create_causal_mask`
composes them) on index grids, and Gemma 3's masks for image tokens (`token_type_ids` through the
library's own `create_masks_for_vision_model`, with and without packed documents), and writes the boolean masks, one string per row ('1' = the query
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


def rule(kind, causal, docs=(), images=()):
    overlays = {"docs": list(docs), "sinks": 0, "globals": [], "prefix": 0}
    if images:
        overlays["images"] = [list(s) for s in images]
    return {"kind": kind, "causal": causal, "overlays": overlays}


def gemma3_image_masks(n, window, images, docs=()):
    """Gemma 3's full and sliding masks for image spans [(start, length)] as its multimodal model
    builds them (token_type_ids -> get_block_sequence_ids_for_mask -> create_masks_for_vision_model,
    eager attention), packed `docs` given as position ids that restart per document, as row strings."""
    from transformers import Gemma3TextConfig
    from transformers.models.gemma3 import modeling_gemma3 as g

    config = Gemma3TextConfig(hidden_size=8, num_hidden_layers=2, num_attention_heads=1, num_key_value_heads=1,
                              head_dim=8, vocab_size=16, sliding_window=window)
    config._attn_implementation = "eager"
    token_type_ids = torch.zeros(1, n, dtype=torch.long)
    for start, length in images:
        token_type_ids[0, start:start + length] = 1
    position_ids = torch.tensor([[p for d in docs for p in range(d)]]) if docs else None
    masks = g.create_masks_for_vision_model(
        config=config, inputs_embeds=torch.zeros(1, n, 8), attention_mask=None, cache=None,
        position_ids=position_ids, block_sequence_ids=g.get_block_sequence_ids_for_mask(token_type_ids))
    rows = {}
    for kind, m in masks.items():
        allowed = m[0, 0] == 0 if m.dtype.is_floating_point else m[0, 0]
        rows[kind] = ["".join("1" if x else "." for x in row) for row in allowed.tolist()]
    return rows


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
    # Gemma 3's image tokens: touching spans are one image; with packed documents the sliding layer
    # looks images up at document-relative positions (its or_mask_function is remapped).
    for images, w, image_docs in (([(2, 3), (9, 3)], 3, ()), ([(1, 2), (3, 4), (11, 2)], 2, ()),
                                  ([(0, 5), (8, 4)], 4, ()), ([(2, 3), (9, 3)], 3, (6, 8)),
                                  ([(1, 4), (7, 5)], 2, (5, 3, 6))):
        masks = gemma3_image_masks(14, w, images, image_docs)
        spans = ",".join(f"{a}:{b}" for a, b in images)
        where = f" docs={list(image_docs)}" if image_docs else ""
        out.append({"name": f"gemma3 image spans {spans} full{where}",
                    "function": "create_masks_for_vision_model(token_type_ids)['full_attention']", "n": 14,
                    "layer": rule({"type": "full"}, True, image_docs, images), "rows": masks["full_attention"]})
        out.append({"name": f"gemma3 image spans {spans} sliding w={w}{where}",
                    "function": "create_masks_for_vision_model(token_type_ids)['sliding_attention']", "n": 14,
                    "layer": rule({"type": "sliding", "window": w}, True, image_docs, images),
                    "rows": masks["sliding_attention"]})
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
