#!/usr/bin/env python3
"""The model-type table of hasseflow's config reader, read from the installed Transformers.

For every text model type (the causal-LM, masked-LM, seq2seq and image-text-to-text auto
mappings, the text-task mappings, every config with a text tower: CLIP's, SigLIP's, ...; see
`text_types`) this records what the reader needs to know about the type and that a config.json
does not say: whether its text model is a decoder or an encoder (from the mask builders its
modeling file calls, and for a few files that call none, from the list below, each checked by
tests/python/test_models_live.py against the real model), the field names and class defaults
of the layer count and the position limit (through the class's `attribute_map`), the text
tower of a composite config, the layer-count fields of an encoder-decoder, and whether the
modeling file applies `sliding_window` to every layer (Mistral's `mask_function = ...`).

    gen_model_types.py          write crates/core/src/model/types.rs
    gen_model_types.py --check  regenerate in memory, exit 1 if the file differs
"""

import argparse
import inspect
import importlib
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "crates" / "core" / "src" / "model" / "types.rs"

# Text models whose modeling file calls no mask builder: their direction, read from the file.
DIRECTION = {
    "blip_text_model": "decoder",  # BlipTextLMHeadModel, is_decoder=True in the captioner
    "cpmant": "decoder",
    "deberta": "encoder",
    "deberta-v2": "encoder",
    "flaubert": "xlm",  # `causal` field, default False
    "fnet": "encoder",  # Fourier mixing over every position
    "funnel": "encoder",
    "layoutlm": "encoder",
    "mra": "encoder",
    "openai-gpt": "decoder",
    "xlm": "xlm",
    "yoso": "encoder",
    "mamba": "decoder",
    "mamba2": "decoder",
    "glm5_next_text": "decoder",
    "kosmos_2_text_model": "decoder",
    "falcon_mamba": "decoder",
    "rwkv": "decoder",
    "xlstm": "decoder",
    "xlnet": "encoder",  # no perm_mask: every position reads every other
    "evolla": "decoder",  # calls both builders and has is_decoder, but its LM is causal
    "trocr": "decoder",
    "reformer": "decoder",
    # Text towers and text-task encoders that build their masks by hand (`extended_attention_mask`)
    # or through a BertModel.
    "markuplm": "encoder",
    "layoutlmv2": "encoder",
    "lxmert": "encoder",  # its layer count is l_layers + x_layers, derived in the reader
    "dpr": "is_decoder",  # DPRConfig has is_decoder; its encoders are BertModels, which read it
    "clvp_encoder": "encoder",  # the file's causal builder is ClvpDecoder's
    # CPM-Ant's forward marks every token as context (`context = 1`), and context tokens read one
    # another both ways: bidirectional in a forward pass.
    "cpmant": "encoder",
}

# Layer counts stored under a name the class's `attribute_map` does not give.
LAYER_FIELD = {"longcat_flash": "num_layers", "pp_formulanet_text": "decoder_layers"}

# Text towers that are a decoder only, though their config says `is_encoder_decoder` (the
# encoder is the vision model's).
DECODER_ONLY = {"pp_formulanet_text"}

WINDOW_ALL = "mask_function = create_causal_mask if self.config.sliding_window is None else create_sliding_window_causal_mask"


# The auto mappings whose every type is a text model: language models, then the text tasks
# (encoders such as MarkupLM, LiLT or Splinter that no language-model mapping lists).
TEXT_MAPPINGS = ("MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", "MODEL_FOR_MASKED_LM_MAPPING_NAMES",
                 "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES", "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES",
                 "MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES", "MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING_NAMES",
                 "MODEL_FOR_QUESTION_ANSWERING_MAPPING_NAMES", "MODEL_FOR_MULTIPLE_CHOICE_MAPPING_NAMES",
                 "MODEL_FOR_TEXT_ENCODING_MAPPING_NAMES")

# Feature-extraction text models that only the AutoModel mapping lists (DPR's retrieval encoders).
FEATURE_EXTRACTION = {"dpr"}

# Types of those mappings left out of the table (refused): Canine's deep stack runs over molecules
# (characters downsampled by a strided convolution after a local-attention character encoder), so
# no layer kind describes it.
NOT_A_STACK = {"canine"}

# Encoders with no `layer_types` whose every layer is a bidirectional sliding window
# (`create_bidirectional_sliding_window_mask` is the file's only mask builder).
WINDOW_EVERYWHERE = {"openai_privacy_filter"}


def tower_of(cfg):
    """The model_type of a config's text tower (`text_config` with a vocabulary), else None."""
    text = getattr(cfg, "text_config", None)
    mt = getattr(text, "model_type", None)
    return mt if isinstance(mt, str) and mt and hasattr(text, "vocab_size") else None


def vlm_tower_of(cfg):
    """The text tower of a retrieval model built over a whole VLM (ColPali: `vlm_config.text_config`)."""
    return tower_of(getattr(cfg, "vlm_config", None))


def text_types():
    """The text model types: every type of the text mappings, the feature-extraction text models,
    and every type of the config mapping whose config has a text tower (CLIP, SigLIP, ALIGN, CLAP,
    EmbeddingGemma 2, ...: its `text_config`, read as the type's language model; ColPali's
    `vlm_config.text_config`)."""
    from transformers import CONFIG_MAPPING
    from transformers.models.auto import modeling_auto as ma

    names = set(FEATURE_EXTRACTION)
    for m in TEXT_MAPPINGS:
        names |= set(getattr(ma, m))
    for t in CONFIG_MAPPING.keys():
        if t in names:
            continue
        try:
            cfg = CONFIG_MAPPING[t]()
        except Exception:  # noqa: BLE001 - a config class that cannot be built by default
            continue
        if tower_of(cfg) not in (None, t) or vlm_tower_of(cfg):
            names.add(t)
    return sorted(names - NOT_A_STACK)


def source_of(cfg_cls, model_type=None):
    mod = cfg_cls.__module__.replace(".configuration_", ".modeling_")
    try:
        return inspect.getsource(importlib.import_module(mod))
    except Exception:  # noqa: BLE001 - a type whose modeling file has another name
        pass
    import transformers
    from transformers.models.auto import modeling_auto as ma

    for m in ("MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", "MODEL_FOR_MASKED_LM_MAPPING_NAMES", "MODEL_MAPPING_NAMES"):
        name = getattr(ma, m).get(model_type)
        if isinstance(name, str):
            try:
                return inspect.getsource(sys.modules[getattr(transformers, name).__module__])
            except Exception:  # noqa: BLE001
                continue
    return ""


def direction(model_type, cfg, src):
    if model_type in DECODER_ONLY:
        return "decoder"
    if model_type in DIRECTION:
        return DIRECTION[model_type]
    causal = "create_causal_mask" in src or "create_sliding_window_causal_mask" in src or "_prepare_4d_causal_attention_mask" in src
    bidir = ("create_bidirectional_mask" in src or "create_bidirectional_sliding_window_mask" in src
             or "_prepare_4d_attention_mask(" in src)
    if causal and bidir and hasattr(cfg, "is_decoder"):
        return "is_decoder"
    if bidir and not causal:
        return "encoder"
    if causal:
        return "decoder"
    return None


def field(cfg_cls, name):
    return dict(getattr(cfg_cls, "attribute_map", {}) or {}).get(name, name)


def default_int(cfg, name):
    try:
        v = getattr(cfg, name)
    except Exception:  # noqa: BLE001
        return None
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def row(model_type):
    from transformers import CONFIG_MAPPING

    cls = CONFIG_MAPPING[model_type]
    cfg = cls()
    text = getattr(cfg, "text_config", None)
    r = {"type": model_type, "text": "", "role": "", "layers": "", "layers_default": None,
         "positions": "", "positions_default": None, "encoder_layers": "", "encoder_default": None,
         "window_all": False, "uniform": ""}
    if text is not None and not isinstance(text, dict) and text.model_type != model_type:
        r["role"] = "composite"
        r["text"] = text.model_type
        return r
    src = source_of(cls, model_type)
    if getattr(cfg, "is_encoder_decoder", False) and model_type not in DECODER_ONLY:
        r["role"] = "encoder_decoder"
        enc = next((k for k in ("encoder_layers", "num_layers", "num_encoder_layers") if hasattr(cfg, k) and default_int(cfg, k) is not None), "")
        dec = next((k for k in ("decoder_layers", "num_decoder_layers") if hasattr(cfg, k) and default_int(cfg, k) is not None), "")
        r["encoder_layers"], r["encoder_default"] = enc, default_int(cfg, enc) if enc else None
        r["layers"], r["layers_default"] = dec, default_int(cfg, dec) if dec else None
    else:
        r["role"] = direction(model_type, cfg, src) or ""
        if not r["role"] and vlm_tower_of(cfg):
            # A file that builds no mask and runs a VLM (ColPali): its language model is the tower.
            r["role"], r["text"] = "composite", vlm_tower_of(cfg)
            return r
        r["layers"] = LAYER_FIELD.get(model_type) or field(cls, "num_hidden_layers")
        r["layers_default"] = default_int(cfg, r["layers"]) or default_int(cfg, "num_hidden_layers")
    r["positions"] = field(cls, "max_position_embeddings")
    r["positions_default"] = default_int(cfg, "max_position_embeddings")
    r["window_all"] = WINDOW_ALL in src
    # A class whose default `layer_types` are one kind (DeepSeek-V3.2: `indexed_attention`
    # everywhere) derives that kind for a file without them.
    try:
        types = getattr(cfg, "layer_types", None)
    except Exception:  # noqa: BLE001
        types = None
    if isinstance(types, (list, tuple)) and types and len(set(types)) == 1 and types[0] != "full_attention":
        r["uniform"] = str(types[0])
    if model_type in WINDOW_EVERYWHERE:
        r["uniform"] = "sliding_attention"
    return r


def render(rows):
    """One line per type, tab-separated (a packed string costs the wasm bundle far less than a
    table of structs): model_type, role, text, layers, layers_default, encoder_layers,
    encoder_default, positions, positions_default, window_all, uniform."""
    import transformers

    roles = {"decoder": "D", "encoder": "E", "is_decoder": "B", "xlm": "X", "encoder_decoder": "S",
             "composite": "C", "": "U"}
    lines = []
    for r in rows:
        cells = [r["type"], roles[r["role"]], r["text"], r["layers"], r["layers_default"], r["encoder_layers"],
                 r["encoder_default"], r["positions"], r["positions_default"], "1" if r["window_all"] else "0",
                 r["uniform"]]
        cell_text = ["" if c is None else str(c) for c in cells]
        assert all("\t" not in c and "\n" not in c and '"' not in c and "\\" not in c for c in cell_text), cells
        lines.append("\t".join(cell_text))
    out = [
        "//! Generated by tests/python/gen_model_types.py from Transformers "
        f"{transformers.__version__}; do not edit",
        "//! (`gen_model_types.py --check` fails when this file and the library disagree).",
        "",
        "/// Every text model type of the pinned Transformers, one per line, sorted by `model_type`:",
        "/// `model_type`, role, text, layers, layers default, encoder layers, encoder default,",
        "/// positions, positions default, window everywhere, uniform kind (tab-separated; see `types_def`).",
        "pub(super) static TYPES: &str = \"\\",
    ]
    out += [line + "\\n\\" for line in lines]
    out.append('";')
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    import transformers

    transformers.logging.set_verbosity_error()
    rows, seen = [], set()
    todo = text_types()
    # The text towers of composites are read too, even when no auto mapping lists them.
    while todo:
        t = todo.pop(0)
        if t in seen:
            continue
        seen.add(t)
        try:
            r = row(t)
        except Exception as e:  # noqa: BLE001 - a config class that cannot be built by default
            print(f"{t}: skipped ({type(e).__name__})", file=sys.stderr)
            continue
        rows.append(r)
        if r["text"]:
            todo.append(r["text"])
        # The towers of encoder-decoder wrappers (MusicGen's decoder, T5Gemma's modules).
        from transformers import CONFIG_MAPPING

        try:
            cfg = CONFIG_MAPPING[t]()
        except Exception:  # noqa: BLE001
            cfg = None
        for sub in ("encoder", "decoder", "text_encoder"):
            c = getattr(cfg, sub, None)
            mt = getattr(c, "model_type", None)
            text_model = hasattr(c, "vocab_size") or hasattr(c, "text_config")  # not ViT, not an audio encoder
            if isinstance(mt, str) and mt in CONFIG_MAPPING and mt not in seen and text_model:
                todo.append(mt)
    rows.sort(key=lambda r: r["type"])
    text = render(rows)
    if args.check:
        if OUT.read_text() != text:
            print(f"{OUT.relative_to(ROOT)} differs from Transformers {transformers.__version__}: run gen_model_types.py")
            return 1
        print(f"{OUT.relative_to(ROOT)}: {len(rows)} types, up to date")
        print(f"{len(rows)} passed, 0 failed")
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}: {len(rows)} types")
    return 0


if __name__ == "__main__":
    sys.exit(main())
