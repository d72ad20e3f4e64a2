#!/usr/bin/env python3
"""Oracle for hasseflow_core::model: what real Transformers derives from a config.json.

Every gallery config (crates/core/gallery/*.json) and a set of synthetic old- and new-style
configs are loaded offline with `transformers.AutoConfig.from_pretrained(<temp dir>)`. For each,
this script records the layer types the config class derives (`layer_types`, or, for classes
without one, what the modeling file picks from the config: Mistral/Mixtral/Phi-3 use
`sliding_window` for every layer, Longformer reads `attention_window`), the effective
`sliding_window` / `attention_chunk_size`, and the hasseflow layer kind each layer maps to
(docs/MODELS.md). It also samples the real mask functions of `transformers.masking_utils` for
every distinct layer kind (as intervals of allowed keys for a few queries at the window/chunk
edges), so the Rust test can check `LayerKind::allows` against the library.

    gen_model_expectations.py          write crates/core/tests/fixtures/hf_model_expectations.json
    gen_model_expectations.py --check  regenerate in memory, exit 1 if the fixture differs
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

from tally import compare_fixture

ROOT = Path(__file__).resolve().parents[2]
GALLERY = ROOT / "crates" / "core" / "gallery"
FIXTURE = ROOT / "crates" / "core" / "tests" / "fixtures" / "hf_model_expectations.json"

# (name, config, field hasseflow refuses or None). Transformers' own verdict is recorded either way.
SYNTHETIC = [
    ("mistral-defaults", {"model_type": "mistral", "num_hidden_layers": 3}, None),
    ("mistral-window-null", {"model_type": "mistral", "num_hidden_layers": 3, "sliding_window": None}, None),
    ("mistral-layer-types-ignored", {"model_type": "mistral", "num_hidden_layers": 2, "sliding_window": 16,
                                     "layer_types": ["full_attention", "sliding_attention"]}, None),
    ("mixtral-defaults", {"model_type": "mixtral"}, None),
    ("phi3-window", {"model_type": "phi3", "num_hidden_layers": 2, "sliding_window": 7}, None),
    ("llama-defaults", {"model_type": "llama"}, None),
    ("bert-defaults", {"model_type": "bert"}, None),
    ("gemma2-defaults", {"model_type": "gemma2"}, None),
    ("gemma2-odd", {"model_type": "gemma2", "num_hidden_layers": 5, "sliding_window": 8}, None),
    ("gemma2-layer-types", {"model_type": "gemma2", "num_hidden_layers": 3, "sliding_window": 8,
                            "layer_types": ["full_attention", "full_attention", "sliding_attention"]}, None),
    ("gemma2-count-mismatch", {"model_type": "gemma2", "num_hidden_layers": 4,
                               "layer_types": ["full_attention"] * 3}, "layer_types"),
    ("gemma2-unknown-type", {"model_type": "gemma2", "num_hidden_layers": 2,
                             "layer_types": ["full_attention", "banana_attention"]}, "layer_types[1]"),
    ("gemma2-window-zero", {"model_type": "gemma2", "num_hidden_layers": 2, "sliding_window": 0}, "sliding_window"),
    ("gemma2-bidirectional", {"model_type": "gemma2", "num_hidden_layers": 2,
                              "use_bidirectional_attention": True}, "use_bidirectional_attention"),
    ("gemma3-text-pattern-4", {"model_type": "gemma3_text", "num_hidden_layers": 10, "sliding_window": 16,
                               "sliding_window_pattern": 4}, None),
    ("gemma3-text-default-pattern", {"model_type": "gemma3_text", "num_hidden_layers": 13}, None),
    ("gemma3-text-bidirectional", {"model_type": "gemma3_text", "num_hidden_layers": 7, "sliding_window": 512,
                                   "use_bidirectional_attention": True}, None),
    ("gemma3-text-bidirectional-odd", {"model_type": "gemma3_text", "num_hidden_layers": 2, "sliding_window": 9,
                                       "use_bidirectional_attention": True, "sliding_window_pattern": 2}, None),
    ("gemma3-composite-defaults", {"model_type": "gemma3"}, None),
    ("cohere2-defaults", {"model_type": "cohere2", "num_hidden_layers": 7}, None),
    ("cohere2-pattern-3", {"model_type": "cohere2", "num_hidden_layers": 7, "sliding_window_pattern": 3,
                           "sliding_window": 32}, None),
    ("olmo3-no-layer-types", {"model_type": "olmo3", "num_hidden_layers": 6, "sliding_window": 64}, None),
    ("gpt-oss-defaults", {"model_type": "gpt_oss"}, None),
    ("gpt-oss-odd", {"model_type": "gpt_oss", "num_hidden_layers": 5}, None),
    ("gpt-oss-window-null", {"model_type": "gpt_oss", "num_hidden_layers": 2, "sliding_window": None},
     "sliding_window"),
    ("llama4-text-no-rope-list", {"model_type": "llama4_text", "num_hidden_layers": 4,
                                  "no_rope_layers": [1, 0, 1, 1], "attention_chunk_size": 16}, None),
    ("llama4-text-interval-3", {"model_type": "llama4_text", "num_hidden_layers": 7,
                                "no_rope_layer_interval": 3}, None),
    ("llama4-text-chunk-null", {"model_type": "llama4_text", "num_hidden_layers": 4,
                                "attention_chunk_size": None}, None),
    ("llama4-composite-defaults", {"model_type": "llama4"}, None),
    ("qwen2-sliding-top", {"model_type": "qwen2", "num_hidden_layers": 5, "use_sliding_window": True,
                           "sliding_window": 64, "max_window_layers": 2}, None),
    ("qwen2-max-window-zero", {"model_type": "qwen2", "num_hidden_layers": 3, "use_sliding_window": True,
                               "sliding_window": 64, "max_window_layers": 0}, None),
    ("qwen2-max-window-all", {"model_type": "qwen2", "num_hidden_layers": 3, "use_sliding_window": True,
                              "sliding_window": 64, "max_window_layers": 3}, None),
    ("qwen2-max-window-default", {"model_type": "qwen2", "num_hidden_layers": 30, "use_sliding_window": True,
                                  "sliding_window": 64}, None),
    ("qwen2-sliding-off", {"model_type": "qwen2", "num_hidden_layers": 3, "use_sliding_window": False,
                           "sliding_window": 64, "max_window_layers": 0}, None),
    ("qwen2-layer-types-without-window", {"model_type": "qwen2", "num_hidden_layers": 2,
                                          "layer_types": ["sliding_attention", "full_attention"]},
     "sliding_window"),
    ("qwen3-default-window", {"model_type": "qwen3", "num_hidden_layers": 3, "use_sliding_window": True,
                              "max_window_layers": 1}, None),
    ("qwen3-next-interval-3", {"model_type": "qwen3_next", "num_hidden_layers": 7,
                               "full_attention_interval": 3}, None),
    ("qwen3-next-legacy-names", {"model_type": "qwen3_next", "num_hidden_layers": 2,
                                 "layer_types": ["mamba", "attention"]}, None),
    ("modernbert-small", {"model_type": "modernbert", "num_hidden_layers": 5, "local_attention": 64,
                          "global_attn_every_n_layers": 2}, None),
    ("modernbert-odd-local", {"model_type": "modernbert", "num_hidden_layers": 2, "local_attention": 9}, None),
    ("longformer-int", {"model_type": "longformer", "num_hidden_layers": 3, "attention_window": 256}, None),
    ("longformer-list", {"model_type": "longformer", "num_hidden_layers": 2, "attention_window": [4, 8]}, None),
    ("longformer-odd", {"model_type": "longformer", "num_hidden_layers": 1, "attention_window": 5},
     "attention_window"),
    ("longformer-list-length", {"model_type": "longformer", "num_hidden_layers": 3, "attention_window": [4, 8]},
     "attention_window"),
]

SUPPORTED_TYPES = {"full_attention", "sliding_attention", "chunked_attention", "linear_attention"}

# Layer types of the newer classes, as hasseflow labels them (docs/MODELS.md): LFM2's short causal
# convolution reads conv_L_cache keys; Nemotron-H's MLP-only blocks mix no positions; Falcon-H1 runs
# attention (create_causal_mask) and Mamba-2 side by side, whose union is a recurrent layer's flow;
# DeepSeek-V3.2's indexer picks keys under create_causal_mask (modeling_deepseek_v32.py).
OTHER_TYPES = {"mlp": "pointwise", "hybrid": "linear_attention", "indexed_attention": "indexed_attention"}

# Text models whose modeling file builds only bidirectional masks (create_bidirectional_mask, or no
# mask at all for DeBERTa-v2): read as encoders.
ENCODERS = ("modernbert", "longformer", "bert", "roberta", "xlm-roberta", "distilbert", "deberta-v2")

# Classes without layer_types whose modeling file picks create_sliding_window_causal_mask for every
# layer when config.sliding_window is set (`mask_function = create_causal_mask if
# self.config.sliding_window is None else create_sliding_window_causal_mask`).
WINDOW_ALL = ("mistral", "mixtral", "phi3", "starcoder2", "qwen3_moe")

# Gallery files whose model_type needs the repository's own code (auto_map): Transformers has no class
# of that name, so they are loaded as the class their remote code is, as Transformers itself does for
# a Kimi K2 text config inside Kimi K2.5 (models/kimi_k25/configuration_kimi_k25.py).
REMOTE_AS = {"kimi_k2": "deepseek_v3"}


def load(config):
    from transformers import AutoConfig

    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "config.json").write_text(json.dumps(config))
        return AutoConfig.from_pretrained(d, trust_remote_code=False)


def text_config(cfg):
    """The language model of a composite config (Gemma 3, Llama 4, Gemma 3n, Qwen2.5-VL, ...)."""
    sub = getattr(cfg, "text_config", None)
    return sub if sub is not None and hasattr(sub, "model_type") else cfg


def derive(cfg):
    """What Transformers' modeling code makes of the config, as hasseflow layer labels."""
    t = text_config(cfg)
    mt = t.model_type
    n = t.num_hidden_layers
    out = {"model_type": mt, "num_hidden_layers": n,
           "max_position_embeddings": getattr(t, "max_position_embeddings", None)}
    bidir = mt in ENCODERS or bool(getattr(t, "use_bidirectional_attention", False))
    out["causal"] = not bidir
    if getattr(t, "is_encoder_decoder", False):
        # T5, BART, Whisper: the encoder builds create_bidirectional_mask (or none), the decoder
        # create_causal_mask for its self-attention and reads every encoder position; hasseflow's
        # spec.layers are the decoder's.
        n_dec = next(getattr(t, f) for f in ("decoder_layers", "num_decoder_layers", "num_hidden_layers")
                     if getattr(t, f, None) is not None)
        n_enc = next(getattr(t, f) for f in ("encoder_layers", "num_layers", "num_hidden_layers")
                     if getattr(t, f, None) is not None)
        out["encoder_layers"] = ["full_attention"] * n_enc
        out["layer_types"] = ["full_attention"] * n_dec
        out["layers"] = ["full_attention"] * n_dec
        return out
    if mt in WINDOW_ALL:
        # modeling_*: create_causal_mask if config.sliding_window is None else create_sliding_window_causal_mask
        sw = t.sliding_window
        out["layer_types"] = ["full_attention" if sw is None else "sliding_attention"] * n
        out["sliding_window"] = sw
        out["layers"] = [f"sliding_attention({sw})" if sw is not None else "full_attention"] * n
        return out
    if mt in ("llama", "bert", "roberta"):
        out["layer_types"] = ["full_attention"] * n
        out["layers"] = ["full_attention"] * n
        return out
    if mt == "longformer":
        aw = t.attention_window
        aw = aw if isinstance(aw, list) else [aw] * n
        out["attention_window"] = aw
        # modeling_longformer: one_sided_attn_window_size = attention_window // 2, |q - k| <= it
        out["layers"] = [f"sliding_attention({w // 2 + 1})" for w in aw]
        return out
    if getattr(t, "layer_types", None) is None:
        # No layer_types in the class: the modeling file builds one mask for every layer,
        # create_causal_mask (create_bidirectional_mask for an encoder); a window or a chunk
        # there would need the file's own rule, which is not written down here.
        if getattr(t, "sliding_window", None) is not None or getattr(t, "attention_chunk_size", None) is not None:
            raise ValueError(f"{mt}: no layer_types but a window or chunk: derivation not modelled")
        out["layer_types"] = ["full_attention"] * n
        out["layers"] = ["full_attention"] * n
        return out
    types = list(t.layer_types)
    out["layer_types"] = types
    sw = getattr(t, "sliding_window", None)
    chunk = getattr(t, "attention_chunk_size", None)
    out["sliding_window"] = sw
    if chunk is not None:
        out["attention_chunk_size"] = chunk
    layers = []
    for lt in types:
        if lt == "sliding_attention":
            if sw is None:
                raise ValueError("sliding_attention layer without sliding_window (create_sliding_window_causal_mask raises)")
            # ModernBERT: |q-k| <= sliding_window; Gemma 3 bidirectional: |q-k| < sliding_window
            w = sw + 1 if mt == "modernbert" else sw
            layers.append(f"sliding_attention({w})")
        elif lt == "chunked_attention":
            layers.append(f"chunked_attention({chunk})")
        elif lt in SUPPORTED_TYPES:
            layers.append(lt)
        elif lt == "conv":
            layers.append(f"conv({t.conv_L_cache})")
        elif lt in OTHER_TYPES:
            layers.append(OTHER_TYPES[lt])
        else:
            raise ValueError(f"layer type {lt} not modelled")
    out["layers"] = layers
    return out


def mask_function(cfg):
    """The mask functions the modeling file uses, per layer type, for this config."""
    import torch
    from transformers import masking_utils as mu

    t = text_config(cfg)
    mt = t.model_type
    zero = torch.tensor([0])
    if mt == "modernbert":
        return {"full_attention": mu.bidirectional_mask_function,
                "sliding_attention": mu.sliding_window_bidirectional_mask_function(t.sliding_window)}
    if mt == "gemma3_text" and getattr(t, "use_bidirectional_attention", False):
        from transformers.models.gemma3.modeling_gemma3 import _bidirectional_window_overlay

        return {"full_attention": mu.or_masks(mu.causal_mask_function, lambda *a: torch.tensor(True, dtype=torch.bool)),
                "sliding_attention": mu.or_masks(mu.sliding_window_causal_mask_function(t.sliding_window),
                                                 _bidirectional_window_overlay(t.sliding_window))}
    if mt in ENCODERS or getattr(t, "is_encoder_decoder", False):
        return {}
    fns = {"full_attention": mu.causal_mask_function, "indexed_attention": mu.causal_mask_function}
    if getattr(t, "sliding_window", None) is not None:
        fns["sliding_attention"] = mu.sliding_window_causal_mask_function(t.sliding_window)
    if getattr(t, "attention_chunk_size", None) is not None:
        fns["chunked_attention"] = mu.chunked_causal_mask_function(t.attention_chunk_size, zero)
    return fns


def intervals(fn, q, lo, hi):
    import torch

    keys = torch.arange(lo, hi + 1)
    allowed = fn(0, 0, torch.tensor(q), keys)
    allowed = torch.as_tensor(allowed).expand(keys.shape).tolist()
    out = []
    for k, ok in zip(range(lo, hi + 1), allowed):
        if ok:
            if out and out[-1][1] == k - 1:
                out[-1][1] = k
            else:
                out.append([k, k])
    return out


def samples(cfg, derived):
    """Allowed keys of a few queries, per distinct layer, from the real mask functions."""
    fns = mask_function(cfg)
    seen = {}
    for lt, label in zip(derived.get("layer_types", []), derived["layers"]):
        if label in seen or lt not in fns:
            continue
        p = int(label.split("(")[1].rstrip(")")) if "(" in label else 4
        rows = []
        for q in sorted({0, p - 1, p, 2 * p + 1}):
            lo, hi = max(0, q - p - 2), q + p + 2
            rows.append({"q": q, "lo": lo, "hi": hi, "allowed": intervals(fns[lt], q, lo, hi)})
        seen[label] = rows
    return [{"layer": label, "rows": rows} for label, rows in seen.items()]


def case(name, config, refuse, source):
    entry = {"name": name, "source": source}
    if source == "synthetic":
        entry["config"] = config
    if refuse is not None:
        entry["refusal_field"] = refuse
    if config.get("model_type") in REMOTE_AS:
        entry["loaded_as"] = REMOTE_AS[config["model_type"]]
        config = {k: v for k, v in config.items() if k != "auto_map"} | {"model_type": entry["loaded_as"]}
    try:
        cfg = load(config)
        derived = derive(cfg)
    except Exception as e:  # the library refuses: hasseflow must too
        entry["transformers_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
        if refuse is None:
            raise SystemExit(f"{name}: Transformers refuses ({e}) but no refusal field is expected")
        return entry
    entry.update(derived)
    entry["mask_samples"] = samples(cfg, derived)
    return entry


def generate():
    import transformers

    entries = []
    for path in sorted(GALLERY.glob("*.json")):
        entries.append(case(path.stem, json.loads(path.read_text()), None, "gallery"))
    for name, config, refuse in SYNTHETIC:
        entries.append(case(name, config, refuse, "synthetic"))
    return {"transformers_version": transformers.__version__, "entries": entries}


def dump(data):
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed fixture")
    args = ap.parse_args()
    import logging

    logging.disable(logging.WARNING)
    data = generate()
    text = dump(data)
    if not args.check:
        FIXTURE.write_text(text)
        print(f"wrote {FIXTURE.relative_to(ROOT)}: {len(data['entries'])} entries, transformers {data['transformers_version']}")
        return 0
    old = json.loads(FIXTURE.read_text())
    if old.get("transformers_version") != data["transformers_version"]:
        print(f"note: fixture from transformers {old.get('transformers_version')}, live {data['transformers_version']}")
    return compare_fixture(data["entries"], old["entries"], "the live library disagrees with the fixture")


if __name__ == "__main__":
    sys.exit(main())
