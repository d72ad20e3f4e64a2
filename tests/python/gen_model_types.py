#!/usr/bin/env python3
"""The model-type table of hasseflow's config reader, read from the installed Transformers.

For every text model type (the causal-LM, masked-LM, seq2seq and image-text-to-text auto
mappings, the text-task mappings, every config with a text tower: CLIP's, SigLIP's, ...; see
`text_types`) this records what the reader needs to know about the type and that a config.json
does not say: whether its text model is a decoder or an encoder (from the mask builders its
modeling file calls, and for a few files that call none, from the list below, each checked by
tests/python/test_models_live.py against the real model), the field names and class defaults
of the layer count and the position limit (through the class's `attribute_map`), the text
tower of a composite config, the layer-count fields of an encoder-decoder, whether the
modeling file applies `sliding_window` to every layer (Mistral's `mask_function = ...`), whether
its text model detects packed documents given as position ids (`packing`, below), and whether it
builds each layer's mask from that layer's `per_layer_config` (NeoMME's per-layer windows).

Packing: `masking_utils` finds packed documents (`find_packed_sequence_indices`) only inside
`create_causal_mask`, `create_sliding_window_causal_mask` and `create_chunked_causal_mask`, and only
when the caller passes `position_ids` (with no 2-D `attention_mask` and no cache);
`create_bidirectional_mask` never looks. So a type detects packing when its text model is a
decoder and the forward of its base model (else some function of its modeling file) calls one of
those causal builders with `position_ids` (as a keyword, or in the `**mask_kwargs` dict it
unpacks) without making a 2-D attention mask or a cache of its own first (BLINDING); the M-RoPE
and crossing-convolution types are listed (PACKING). tests/python/test_models_live.py checks every
type's fact against the real model with packed position ids.

    gen_model_types.py          write crates/core/src/model/types.rs
    gen_model_types.py --check  regenerate in memory, exit 1 if the file differs
"""

import argparse
import ast
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

# What the text model does with packed documents given as 2-D position ids, where the modeling
# file does not show it plainly (each checked against the real model by test_models_live.py):
#   "M": M-RoPE models that build the mask from `text_position_ids`, the first row of 4-row
#        position ids (text positions, then M-RoPE's three): 2-D position ids are not read for it;
#   "C": the masks detect the documents, but short causal convolutions beside the attention or
#        recurrence (and a recurrence that resets at position 0) read a few positions across each
#        boundary, which no layer kind describes with documents: a run with documents is refused.
MROPE_TEXT_POSITIONS = ("cosmos3_edge_text", "ernie4_5_vl_moe_text", "glm4v_text", "glm4v_moe_text", "glm_image_text",
                        "glm_ocr_text", "hunyuan_vl_text", "hy_v4_vl_text", "paddleocr_vl_text", "qwen2_5_omni_text",
                        "qwen2_5_vl_text", "qwen2_vl_text")
# Builders called only `if attention_mask is not None` (AIMv2's text tower): with a 2-D mask the
# packing is not looked for, and without one no mask is built at all: read across either way.
MASK_ONLY_WITH_ATTENTION_MASK = ("aimv2_text_model",)
CROSSING_CONVOLUTIONS = ("inkling_text", "inkling2_text", "inkling2_loop_text", "recurrent_gemma", "zaya")
PACKING = {**{t: "M" for t in MROPE_TEXT_POSITIONS}, **{t: "C" for t in CROSSING_CONVOLUTIONS},
           **{t: "0" for t in MASK_ONLY_WITH_ATTENTION_MASK}}

# A forward that makes a 2-D attention mask when given none (IDEFICS), or a cache whatever
# `use_cache` says (DiffusionGemma), never lets the builders look at the position ids: an
# `if attention_mask is None: attention_mask = torch.ones(...)` or `if cache is None: cache =
# DynamicCache(...)` at the top level of the forward that builds the masks.
BLINDING = {"attention_mask": "torch.ones(", "cache": "DynamicCache(", "past_key_values": "DynamicCache("}

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


# The mask builders that detect packed documents from `position_ids`, and the ones that never do.
PACKING_BUILDERS = {"create_causal_mask", "create_sliding_window_causal_mask", "create_chunked_causal_mask",
                    "create_masks_for_generate"}
ALL_BUILDERS = PACKING_BUILDERS | {"create_bidirectional_mask", "create_bidirectional_sliding_window_mask"}


def _callee(node):
    f = node.func
    while isinstance(f, ast.Subscript):  # mask_creation_functions[layer_type](...)
        f = f.value
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return ""


def _mask_calls(src):
    """(callee, passes position_ids, per-layer config) for every call of a mask builder in `src`:
    by name, or through a variable or table holding builders (`mask_function = create_causal_mask
    if ... else ...`, `mask_creation_functions[layer_type]`). A call passes position ids with a
    `position_ids=` keyword that is not None, or with `**kwargs` of a dict whose literal (or an
    item assignment, or a `.copy()` of such a dict) has a "position_ids" key; it gets a per-layer
    config when its `config=` is read from `per_layer_config[...]`."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return []
    keys, per_layer, holders = {}, set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Name):
                text = ast.unparse(value)
                if isinstance(value, ast.Dict):
                    keys.setdefault(target.id, set()).update(
                        k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str))
                elif isinstance(value, ast.Call) and _callee(value) == "copy" and isinstance(value.func, ast.Attribute) \
                        and isinstance(value.func.value, ast.Name):
                    keys.setdefault(target.id, set()).update(keys.get(value.func.value.id, set()))
                if "per_layer_config[" in text:
                    per_layer.add(target.id)
                if any(b in text for b in PACKING_BUILDERS) or "MASK_FUNCTION" in text:
                    holders.add(target.id)
            elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                    and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str):
                keys.setdefault(target.value.id, set()).add(target.slice.value)
    calls = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _callee(node)
        if name not in ALL_BUILDERS and name not in holders:
            continue
        passes = False
        layer_config = False
        for kw in node.keywords:
            if kw.arg == "position_ids" and not (isinstance(kw.value, ast.Constant) and kw.value.value is None):
                passes = True
            if kw.arg is None and isinstance(kw.value, ast.Name) and "position_ids" in keys.get(kw.value.id, ()):
                passes = True
            if kw.arg == "config" and (isinstance(kw.value, ast.Name) and kw.value.id in per_layer
                                       or "per_layer_config[" in ast.unparse(kw.value)):
                layer_config = True
        calls.append((name, passes and name not in ("create_bidirectional_mask", "create_bidirectional_sliding_window_mask"),
                      layer_config))
    return calls


def packing(model_type, role, src):
    """What the text model of `model_type` does with packed documents given as 2-D position ids:
    "1" detects them, "0" reads across them, or a code of PACKING."""
    if model_type in PACKING:
        return PACKING[model_type]
    if role != "decoder":
        return "0"  # encoders build create_bidirectional_mask; BERT-style decoders pass no position_ids
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return "0"
    forward = _base_forward(model_type)
    if forward is not None and _mask_calls(ast.unparse(forward)):
        tree = forward  # the base model's own forward builds the masks: it alone decides
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef) and any(passes for _, passes, _ in _mask_calls(ast.unparse(fn))) \
                and not _blinded(fn):
            return "1"
    return "0"


def _base_forward(model_type):
    """The AST of the `forward` of the class AutoModel builds for `model_type`, if it can be read."""
    import textwrap

    import transformers
    from transformers.models.auto import modeling_auto as ma

    name = ma.MODEL_MAPPING_NAMES.get(model_type)
    if isinstance(name, (tuple, list)):
        name = name[0]
    try:
        cls = getattr(transformers, name) if name else _own_base_class(model_type)
        fn = ast.parse(textwrap.dedent(inspect.getsource(cls.forward))).body[0]
    except Exception:  # noqa: BLE001 - no such class, or no source: the file decides
        return None
    return fn if isinstance(fn, ast.FunctionDef) else None


def _own_base_class(model_type):
    """A type without an AutoModel entry (a text tower): the base model class of its modeling
    file whose `config_class` is its config class, as the live test builds it."""
    from transformers import CONFIG_MAPPING

    cfg_cls = CONFIG_MAPPING[model_type]
    mod = importlib.import_module(cfg_cls.__module__.replace(".configuration_", ".modeling_"))
    return next(c for n, c in sorted(vars(mod).items()) if inspect.isclass(c) and n.endswith("Model")
                and "For" not in n and getattr(c, "config_class", None) is cfg_cls)


def _blinded(fn):
    """Whether `fn` makes an attention mask or a cache itself when given none (BLINDING)."""
    for stmt in fn.body:
        if not (isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare) and isinstance(stmt.test.left, ast.Name)
                and isinstance(stmt.test.ops[0], ast.Is) and isinstance(stmt.test.comparators[0], ast.Constant)
                and stmt.test.comparators[0].value is None):
            continue
        name = stmt.test.left.id
        made = BLINDING.get(name)
        if made and any(isinstance(b, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in b.targets)
                        and made in ast.unparse(b.value) for b in stmt.body):
            return True
    return False


def per_layer_masks(src):
    """Whether the modeling file builds a layer's mask from that layer's `per_layer_config`."""
    return any(layer for _, _, layer in _mask_calls(src))


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
         "window_all": False, "uniform": "", "packing": "", "per_layer": False}
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
    r["packing"] = packing(model_type, r["role"], src)
    r["per_layer"] = per_layer_masks(src)
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
    encoder_default, positions, positions_default, window_all, uniform, packing (1: detects packed
    documents given as position ids, 0: reads across them, M / C: see PACKING; empty for a
    composite, whose text tower's row says), per-layer masks (1: each layer's mask from its
    `per_layer_config`)."""
    import transformers

    roles = {"decoder": "D", "encoder": "E", "is_decoder": "B", "xlm": "X", "encoder_decoder": "S",
             "composite": "C", "": "U"}
    lines = []
    for r in rows:
        cells = [r["type"], roles[r["role"]], r["text"], r["layers"], r["layers_default"], r["encoder_layers"],
                 r["encoder_default"], r["positions"], r["positions_default"], "1" if r["window_all"] else "0",
                 r["uniform"], r["packing"], "1" if r["per_layer"] else "0"]
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
        "/// positions, positions default, window everywhere, uniform kind, packing detected, per-layer",
        "/// masks (tab-separated; see `types_def`).",
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
    unknown = sorted(set(PACKING) - {r["type"] for r in rows})
    assert not unknown, f"PACKING names types Transformers {transformers.__version__} does not have: {unknown}"
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
