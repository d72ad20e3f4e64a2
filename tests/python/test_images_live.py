#!/usr/bin/env python3
"""Image spans (`hasseflow.model(..., images=...)`, `hasseflow model --images`) against the real
Transformers: a tiny Gemma 3 (`Gemma3Model`, the type whose `token_type_ids` make image tokens read
each other both ways), float64, eager attention, random weights, sliding window 5 below n = 40 so
that its sliding and full layers both matter.

Its true per-layer reach is measured by forward-mode differentiation over all positions:

    R(l)[q, k] = d hidden_states[l][q] / d inputs_embeds[k] != 0     (float64: zeros are structural)

one forward pass over n copies of the same random embeddings, copy k carrying a random tangent at
position k only, with `token_type_ids` marking the image spans (and packed documents as position ids
that restart at 0 in every document). Every layer's R(l) must equal the prediction cell for cell:
without documents, with documents, with an image that crosses a document boundary (Transformers'
sliding layers then look images up at document-relative positions, and hasseflow predicts that
too), without images (where image tokens read only what text tokens read), and four seeded random
sets of spans, two of them over packed documents. The CLI's
`--images` gives the same rows as `model(images=...)`.

Usage: python tests/python/test_images_live.py [path/to/hasseflow]
Prints one line per failure and ends with "N passed, M failed"; exits non-zero on any failure.
"""

import json
import os
import random
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import torch
import transformers as tf
from torch.autograd import forward_ad as fwAD

import hasseflow
from tally import Tally

BIN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("HASSEFLOW_BIN", "target/debug/hasseflow")
T = Tally()
N = 40
WINDOW = 5
LAYERS = ["sliding_attention", "full_attention", "sliding_attention", "sliding_attention", "full_attention"]


def tiny_gemma3():
    """A Gemma 3 (vision tower, projector, text tower) small enough to measure at every position."""
    text = tf.Gemma3TextConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=len(LAYERS),
                               num_attention_heads=2, num_key_value_heads=1, head_dim=16, vocab_size=64,
                               sliding_window=WINDOW, layer_types=LAYERS, max_position_embeddings=128)
    vision = tf.SiglipVisionConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                   num_attention_heads=1, image_size=16, patch_size=4)
    config = tf.Gemma3Config(text_config=text.to_dict(), vision_config=vision.to_dict(), mm_tokens_per_image=4)
    torch.manual_seed(0)
    model = tf.Gemma3Model(config)
    model.set_attn_implementation("eager")
    return model.double().eval()


def measured(model, images, docs):
    """Every layer's R(l) of the real model, as (L, n, n) booleans (row q, column k)."""
    torch.manual_seed(1)
    dim = model.config.text_config.hidden_size
    x = torch.randn(1, N, dim, dtype=torch.float64).expand(N, N, dim).contiguous()
    tangent = torch.zeros(N, N, dim, dtype=torch.float64)
    tangent[torch.arange(N), torch.arange(N)] = torch.randn(N, dim, dtype=torch.float64)
    token_type_ids = torch.zeros(N, N, dtype=torch.long)
    for start, length in images:
        token_type_ids[:, start:start + length] = 1
    position_ids = None
    if docs:
        position_ids = torch.tensor([p for d in docs for p in range(d)]).expand(N, N)
    with torch.no_grad(), fwAD.dual_level():
        out = model(inputs_embeds=fwAD.make_dual(x, tangent), token_type_ids=token_type_ids,
                    position_ids=position_ids, output_hidden_states=True, use_cache=False, return_dict=True)
        # hidden_states[0] is the input; copy k's tangent at position q is d h[q] / d x[k].
        layers = [fwAD.unpack_dual(h).tangent for h in out.hidden_states[1:]]
    return np.stack([(t != 0).any(-1).T.numpy() for t in layers])


def dense(rows, layers):
    """The reported rows ({q: per-layer intervals}) as (L, n, n) booleans."""
    out = np.zeros((layers, N, N), dtype=bool)
    for q, per_layer in rows.items():
        for l, spans in enumerate(per_layer):
            for lo, hi in spans:
                out[l, int(q), lo:hi + 1] = True
    return out


def first_difference(a, b):
    layer, q, k = (int(i) for i in np.argwhere(a != b)[0])
    return f"layer {layer + 1} q={q} k={k}: real {bool(a[layer, q, k])}, predicted {bool(b[layer, q, k])}"


def compare(model, images, docs, what):
    real = measured(model, images, docs)
    report = hasseflow.model(model.config, N, docs, images=images, rows=range(N))
    predicted = dense(report.rows, len(report.per_layer))
    T.check(real.shape == predicted.shape, f"{what}: {real.shape[0]} layers measured, {predicted.shape[0]} predicted")
    if real.shape != predicted.shape:
        return None
    for l in range(real.shape[0]):
        wrong = int((real[l] != predicted[l]).sum())
        T.check(wrong == 0, f"{what}: layer {l + 1} ({report.types[l]}) differs in {wrong} cells"
                            + (f", first {first_difference(real, predicted)}" if wrong else ""))
    return real, report


def main():
    warnings.filterwarnings("ignore")
    tf.logging.set_verbosity_error()
    model = tiny_gemma3()
    images = [(6, 7), (21, 9)]
    plain = compare(model, [], None, "no images")
    both = compare(model, images, None, "images 6:7,21:9")
    # Packed documents, an image inside each and one across the boundary at 18.
    packed = compare(model, [(3, 5), (15, 6), (30, 4)], [18, 22], "images 3:5,15:6,30:4 in documents 18,22")
    if packed is not None:
        real = packed[0]
        # Transformers' sliding layers look images up at document-relative positions: in the second
        # document (from 18) text tokens 21..25 read each other ahead (positions 3..7 are an image),
        # image tokens 30..33 do not (positions 12..15 are text); its full layers use the real spans.
        T.check(real[0, 21, 25] and not real[0, 30, 33] and real[1, 30, 33] and not real[0, 17, 18],
                "the real model's sliding layer reads images at document-relative positions under packing")
    compare(model, images, [13, 27], "images 6:7,21:9 in documents 13,27")
    # Seeded random spans (gaps of at least one text token), half of them over two documents.
    rng = random.Random(29)
    for case in range(4):
        docs = None
        if case % 2:
            cut = rng.randrange(5, N - 5)
            docs = [cut, N - cut]
        spans, at = [], rng.randrange(0, 6)
        while (length := rng.randrange(1, 9)) + at <= N:
            spans.append((at, length))
            at += length + rng.randrange(1, 8)
        compare(model, spans, docs, f"random case {case}: images {spans}" + (f" in documents {docs}" if docs else ""))
    if plain is not None and both is not None:
        real_plain, real_images = plain[0], both[0]
        # The measurement sees the images: an image token reads the rest of its image ahead.
        T.check(real_images[0, 6, 12] and not real_plain[0, 6, 12] and not real_images[0, 5, 6],
                "the real model's first layer: image token 6 reads token 12 of its image, text token 5 does not")
        T.check(both[1].types[0] == f"sliding_attention({WINDOW})" and both[1].types[1] == "full_attention",
                "the tiny model has sliding and full layers")
        with tempfile.TemporaryDirectory() as tmp:
            model.config.save_pretrained(tmp)
            args = [BIN, "model", os.path.join(tmp, "config.json"), "--context", str(N), "--images", "6:7,21:9",
                    "--json"] + [a for q in range(N) for a in ("--row", str(q))]
            out = subprocess.run(args, capture_output=True, text=True, timeout=600)
            cli = json.loads(out.stdout) if out.returncode == 0 else {"rows": {}, "error": out.stderr}
        T.check(cli["rows"] == both[1].rows and cli.get("images") == [[6, 7], [21, 9]],
                f"hasseflow model --images gives the rows of model(images=...) {cli.get('error', '')}")
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
