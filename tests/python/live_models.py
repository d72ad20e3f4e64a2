"""Tiny live models for the `hasseflow model` oracle (tests/python/test_models_live.py).

For every text model type of the installed Transformers this module builds a tiny model from the
type's default config (shrunk by field-name rules, shrink_dict / select_layers, plus a per-type
table, OVERRIDES), saves the config with `save_pretrained` (the file a user has on the Hub, the one
hasseflow reads), reloads it with `AutoConfig.from_pretrained`, builds the text tower from the
reloaded config (eager attention, eager experts, float64, eval mode) and measures its true
per-layer reach by forward-mode differentiation:

    R(l)[q, k] = d hidden_states[l][q] / d embedding[k] != 0      (exactly: float64 zeros are structural)

One forward pass (`torch.autograd.forward_ad`) over a batch of n copies of the same random
embeddings, copy k carrying a random tangent at position k only, gives every R(l) at once.

Per-layer kinds ("causal full", "causal band 8", "bidir chunk 8", "band -3..+4", "none", "other
(...)"): layer 1's one-layer adjacency is R(1). For a later layer, the kind is the single candidate
kind A with R(l) = A o R(l-1) (boolean product; "(inferred)"); when several fit (R(l-1) already
saturated), a second pass injects a fresh tangent at the input of that layer (a forward pre-hook on
the layer module, one batch group of n rows per layer, cut short after the last one) and reads the
layer's own adjacency from its output. "undetermined (...)" when neither works.

Packed documents: a second pass over the same inputs and tangents gives the model the documents
DOCS (20 + 36 = n) as position ids restarting at 0 in each (no 2-D attention_mask, no cache, as
DataCollatorWithFlattening's batches reach a model in training), and measures R(l) again: the
reach the model really has over packed documents, to compare with `hasseflow model --docs`.
Windows, chunks and per-layer windows are shrunk below n, each distinct size to its own
(window_sizes), so that every size binds.

Encoder-decoders are measured on one combined sequence of n_enc + n_dec positions, encoder first:
layers 1..L_enc are the encoder's (decoder rows reach only themselves), layers L_enc+1.. the
decoder's (decoder rows over every input, encoder rows equal to the encoder's last layer).

What keeps the measure exact (each is recorded in the type's notes):
- SSM / linear-attention decays are re-drawn small (A_log in [-1, 0], dt biases and RWKV
  time_decay in [-4, -3]): large decays underflow to exactly zero over 56 steps (several kernels
  compute them in float32), which would cut long-range cells that are nonzero in exact arithmetic.
- All-zero parameter tensors (zero-initialised projections, gates, sinks) are re-drawn N(0, 0.02):
  a zero projection cuts a path the architecture has.
- Data-dependent sparse attention (indexers, DeepSeek-V3.2 style top-k) gets index_topk /
  indexer_budget 112 >= n, so the selection keeps everything and the reach is the static bound.
- Custom autograd Functions without a forward-mode rule are replaced by their forward (bloom GeLU,
  RecurrentGemma sqrt, YOSO expectation, Reformer reversible layers); Python chunked kernels run with
  chunk_size 16 (the chunking is exact); indexers that loop over queries run on one batch row.
- The default dtype is float64 while measuring (masks built with torch.full(finfo.min) agree).
Remaining risk: an accidental exact zero (a softmax weight underflowing, an exact cancellation) would
show as a missing cell; with 32-wide layers and 0.02-scale weights logits stay small.
"""

import contextlib
import hashlib
import importlib
import inspect
import json
import logging
import os
import re
import warnings
import zlib
from pathlib import Path

N = 56  # the context every model is measured at
DOCS = [20, 36]  # the packed documents of the second pass (position ids restarting at 0 in each)
MEASURE_VERSION = 2  # bump when the measurement changes (invalidates --cache entries)
# Every random draw (weights, embeddings, tangents) is seeded from the type name plus SEED; another
# SEED (HASSEFLOW_LIVE_SEED) re-measures with other numbers, to check that no cell is an accident.
SEED = int(os.environ.get("HASSEFLOW_LIVE_SEED", "0"))


def seed_of(name):
    return (zlib.crc32(name.encode()) + 7919 * SEED) % (2 ** 31)

HIDDEN = 32
HEADS = 2
KV_HEADS = 1
HEAD_DIM = 16
INTER = 64
VOCAB = 128
EXPERTS = 4
TOPK = 2
WINDOW = 8
CHUNK = 16
MAX_POS = 128


def quiet():
    """Silences Transformers' and torch's warnings and log noise."""
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except Exception:
        pass


def preload():
    """Imports what every measurement needs (the forked workers inherit it)."""
    import importlib

    for m in ("transformers", "transformers.modeling_utils", "transformers.masking_utils", "transformers.modeling_layers",
              "transformers.generation.utils", "transformers.processing_utils", "transformers.models.auto.modeling_auto",
              "transformers.models.auto.configuration_auto", "torch._decomp.decompositions_for_jvp",
              "torch.autograd.forward_ad", "transformers.convert_slow_tokenizer", "transformers.image_processing_utils",
              "transformers.video_processing_utils", "transformers.tokenization_utils_tokenizers",
              "transformers.integrations.sdpa_attention", "transformers.integrations.eager_paged"):
        try:
            importlib.import_module(m)
        except Exception:
            pass
    from transformers import AutoConfig, AutoModel  # noqa: F401


def all_types():
    """The text model types, as gen_model_types.py lists them: the language-model and text-task
    mappings, the feature-extraction text models, and every config with a text tower (CLIP, ...)."""
    from gen_model_types import text_types

    return text_types()


def family(t):
    """A short family label: the type up to its first separator or version digit."""
    t = t.lower()
    for prefix in ("big_bird", "bigbird", "data2vec", "xlm-roberta", "roberta", "deberta", "gemma", "qwen", "llama", "llava", "mistral",
                   "granite", "glm", "phi", "gpt", "t5", "bert", "mamba", "olmo", "lfm", "deepseek",
                   "minicpm", "minimax", "blip", "kosmos", "idefics", "exaone", "ernie", "hunyuan", "hy_",
                   "inkling", "cohere", "falcon", "zamba", "seamless", "musicgen", "pegasus", "blenderbot",
                   "kimi", "nemotron", "apertus", "dots", "voxtral", "muse", "mbart", "marian", "esm",
                   "funnel", "xlnet", "opt", "bart", "whisper", "mpt", "jamba", "bamba", "ultra", "modernbert"):
        if t.startswith(prefix):
            return prefix.rstrip("_-")
    return re.split(r"[-_0-9]", t)[0] or t


# ---------------------------------------------------------------------------------------------
# Shrinking a config
# ---------------------------------------------------------------------------------------------

HIDDEN_FIELDS = {"hidden_size", "d_model", "n_embd", "embed_dim", "dim", "emb_dim", "word_embed_proj_dim", "embedding_dim",
                 "embedding_size", "hidden_dim", "input_embedding_size", "output_embedding_size"}
HEAD_FIELDS = {"num_attention_heads", "n_head", "num_heads", "n_heads", "attention_heads", "encoder_attention_heads",
               "decoder_attention_heads", "num_decoder_attention_heads", "num_encoder_attention_heads",
               "swa_num_attention_heads", "num_sliding_attention_heads", "index_n_heads", "indexer_n_heads",
               "linear_num_value_heads", "linear_num_heads", "mamba_n_heads", "mamba_num_heads",
               "num_self_attention_heads", "num_cross_attention_heads", "num_attention_heads_per_layer"}
KV_FIELDS = {"num_key_value_heads", "num_kv_heads", "swa_num_key_value_heads", "num_query_groups",
             "indexer_kv_heads", "linear_num_key_heads"}
HEAD_DIM_FIELDS = {"head_dim", "d_kv", "attention_head_dim", "v_head_dim", "qk_nope_head_dim", "index_head_dim",
                   "indexer_head_dim", "linear_key_head_dim", "linear_value_head_dim", "linear_head_dim",
                   "mamba_d_head", "mamba_head_dim", "swa_head_dim", "kv_channels", "d_head", "attention_head_size",
                   "dim_head", "mamba_headdim"}
ROPE_DIM_FIELDS = {"qk_rope_head_dim", "rotary_dim"}
RANK_FIELDS = {"q_lora_rank", "kv_lora_rank", "o_lora_rank", "adapter_rank", "laurel_rank", "loop_gate_rank",
               "gated_norm_rank", "hc_lowrank", "embedding_rank", "moe_latent_size"}
INTER_FIELDS = {"intermediate_size", "ffn_dim", "encoder_ffn_dim", "decoder_ffn_dim", "d_ff", "n_inner",
                "moe_intermediate_size", "shared_expert_intermediate_size", "shared_intermediate_size",
                "moe_shared_expert_intermediate_size", "intermediate_size_mlp", "dense_intermediate_size",
                "prefix_dense_intermediate_size", "expert_ffn_hidden_size", "ffn_hidden_size", "moe_hidden_size",
                "shared_experts_intermediate_size", "feed_forward_size", "d_inner", "dim_ff", "dff",
                "share_expert_dim", "ple_embed_dim", "hidden_size_per_layer_input", "pooler_hidden_size",
                "attention_hidden_size", "projection_dim", "prediction_head_size", "encoder_hidden_size",
                "cross_attention_hidden_size", "intra_bottleneck_size", "true_hidden_size", "d_rel", "d_latents",
                "qk_channels", "v_channels", "lru_width", "entity_emb_size", "pronunciation_embed_dim",
                "shape_embed_dim", "axial_pos_embds_dim", "attention_value_scale_dim"}
VOCAB_FIELDS = {"vocab_size", "src_vocab_size", "tgt_vocab_size", "decoder_vocab_size", "output_vocab_size",
                "vocab_size_per_layer_input", "entity_vocab_size", "pronunciation_vocab_size", "shape_vocab_size",
                "audio_vocab_size", "char_vocab_size", "t2u_vocab_size", "unit_hifi_gan_vocab_size",
                "additional_vocab_size", "ngram_vocab_size_base"}
EXPERT_FIELDS = {"num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts"}
TOPK_FIELDS = {"num_experts_per_tok", "top_k", "moe_topk", "num_experts_per_token", "moe_k", "top_k_experts",
               "router_topk"}
SHARED_FIELDS = {"n_shared_experts", "num_shared_experts", "moe_num_shared_experts"}
POS_FIELDS = {"max_position_embeddings", "n_positions", "n_ctx", "max_source_positions", "max_target_positions",
              "max_encoder_position_embeddings", "max_decoder_position_embeddings", "max_seq_len",
              "t2u_max_position_embeddings", "context_length", "max_2d_position_embeddings",
              "left_max_position_embeddings", "right_max_position_embeddings"}
WINDOW_FIELDS = {"sliding_window": WINDOW, "attention_chunk_size": CHUNK, "local_attention": 2 * WINDOW,
                 "attention_window": WINDOW, "window_size": WINDOW, "sliding_window_size": WINDOW,
                 "attention_window_size": WINDOW, "local_attention_window_len": WINDOW}
STATE_FIELDS = {"mamba_d_state": 16, "ssm_state_size": 16, "state_size": 16, "mamba_dt_rank": 8,
                "time_step_rank": 8, "mamba_chunk_size": 16, "chunk_size": 16, "index_topk": 2 * N,
                "indexer_budget": 2 * N}
def _is_config(v):
    return isinstance(v, dict) and any(k in v for k in ("model_type", "hidden_size", "num_hidden_layers", "d_model"))


def _lower(d, key, target):
    v = d.get(key)
    if isinstance(v, list) and v and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        d[key] = [min(x, target) for x in v]
        return
    if isinstance(v, bool) or not isinstance(v, int):
        return
    if v > target:
        d[key] = target


def _per_layer_dicts(d):
    """The per-layer settings of a config dict (per_layer_config: {"5": {"sliding_window": 1024}})."""
    return [inner for v in d.values()
            if isinstance(v, dict) and v and all(isinstance(x, dict) for x in v.values()) and not _is_config(v)
            for inner in v.values() if "model_type" not in inner]


def window_sizes(d):
    """{field: {size: shrunk size}} for the windows and chunks of one config dict, its per-layer
    settings and its per-layer lists: every size above the field's target (WINDOW_FIELDS) gets its
    own size below n, in the same order (8, 12, 16, ... for windows; 16, 24, ... for chunks), so
    that layers with different windows keep different windows and each size binds at n = 56."""
    out = {}
    for k, target in WINDOW_FIELDS.items():
        sizes = set()
        for src in [d] + _per_layer_dicts(d):
            v = src.get(k)
            if isinstance(v, int) and not isinstance(v, bool):
                sizes.add(v)
            elif isinstance(v, list):
                sizes |= {x for x in v if isinstance(x, int) and not isinstance(x, bool)}
        step = max(2, target // 2)
        big = sorted(x for x in sizes if x > target)
        out[k] = {x: target + step * i for i, x in enumerate(big)}
        assert all(v < N for v in out[k].values()), f"{k}: {len(big)} distinct sizes do not fit below n = {N}"
    return out


def unshrunk_windows(d, path=""):
    """The windows and chunks (WINDOW_FIELDS, per-layer settings and sub-configs included) of a
    saved config that are not below n: each would hide how its layers differ from full attention."""
    out = []
    for k, v in d.items():
        if isinstance(v, dict):
            out += unshrunk_windows(v, f"{path}{k}.")
        elif k in WINDOW_FIELDS and not isinstance(v, bool):
            sizes = v if isinstance(v, list) else [v]
            if any(isinstance(x, int) and x >= N for x in sizes):
                out.append(f"{path}{k} = {v}")
    return out


def shrink_dict(d, depth=0, windows=None):
    """Shrinks one config dict in place by field names (and, recursively, its sub-config dicts).
    `windows`: the parent's window sizes (window_sizes) for its per-layer settings."""
    for k, v in list(d.items()):
        if _is_config(v):
            shrink_dict(v, depth + 1)
            if depth > 0 or k not in ("text_config", "encoder", "decoder"):
                select_layers(v)  # (the text config, encoder and decoder are cut by shrunk_config)
    if windows is None:
        windows = window_sizes(d)
    heads_default = d.get("num_attention_heads")
    # per-layer settings (per_layer_config: {"5": {"head_dim": 512}}) shrink like the rest
    for inner in _per_layer_dicts(d):
        shrink_dict(inner, depth + 1, windows)
    rope_is_head = isinstance(d.get("qk_rope_head_dim"), int) and d.get("head_dim") == d.get("qk_rope_head_dim")
    for k in list(d):
        v = d[k]
        if isinstance(v, bool):
            continue
        if v is None:
            # counts some classes leave unset but read as numbers (Hub files carry them)
            if k in EXPERT_FIELDS:
                d[k] = EXPERTS
            elif k in TOPK_FIELDS:
                d[k] = TOPK
            elif k == "vocab_size":
                d[k] = VOCAB
            elif k in ("n_group", "topk_group") or k in SHARED_FIELDS:
                d[k] = 1
            elif k in ("moe_intermediate_size",):
                d[k] = INTER
            continue
        if k in HIDDEN_FIELDS:
            _lower(d, k, HIDDEN)
        elif k in HEAD_FIELDS:
            _lower(d, k, HEADS)
        elif k in KV_FIELDS:
            if isinstance(v, int) and v == heads_default:
                _lower(d, k, HEADS)
            else:
                _lower(d, k, KV_HEADS)
        elif k in HEAD_DIM_FIELDS:
            _lower(d, k, HEAD_DIM)
        elif k in ROPE_DIM_FIELDS:
            _lower(d, k, HEAD_DIM // 2)
        elif k in RANK_FIELDS:
            _lower(d, k, 16)
        elif k in INTER_FIELDS:
            if isinstance(v, list):
                d[k] = [min(x, INTER) if isinstance(x, int) and not isinstance(x, bool) else x for x in v]
            else:
                _lower(d, k, INTER)
        elif k in ("n_groups", "mamba_n_groups", "mamba_ngroups"):
            _lower(d, k, 1)
        elif k in VOCAB_FIELDS:
            _lower(d, k, VOCAB)
        elif k in EXPERT_FIELDS:
            _lower(d, k, EXPERTS)
        elif k in TOPK_FIELDS:
            _lower(d, k, TOPK)
        elif k in SHARED_FIELDS:
            _lower(d, k, 1)
        elif k in ("n_group", "topk_group", "num_expert_group"):
            _lower(d, k, 1)
        elif k in POS_FIELDS:
            if isinstance(v, int) and (v > MAX_POS or v < 2 * N):
                d[k] = MAX_POS
        elif k in WINDOW_FIELDS:
            if isinstance(v, int):
                d[k] = windows[k].get(v, v)
            elif isinstance(v, list) and v and all(isinstance(x, int) for x in v):
                d[k] = [windows[k].get(x, x) for x in v]
        elif k in STATE_FIELDS:
            _lower(d, k, STATE_FIELDS[k])
        elif ("dropout" in k or k.endswith("_pdrop") or "layerdrop" in k or k == "drop_path_rate") and isinstance(v, float):
            d[k] = 0.0
        elif k in ("use_mamba_kernels", "use_mambapy", "use_mem_eff_path", "apply_spec_augment"):
            d[k] = False
        elif k == "first_k_dense_replace":
            _lower(d, k, 1)
        elif k == "expert_capacity":
            d[k] = 4 * N * N
    # Mamba-2 style mixers: heads * head_dim must equal expand * hidden
    for heads_k, dim_k, exp_k in (("mamba_n_heads", "mamba_d_head", "mamba_expand"), ("num_heads", "head_dim", "expand"),
                                  ("mamba_num_heads", "mamba_head_dim", "mamba_expand"), ("mamba_num_heads", "mamba_head_dim", "expand"),
                                  ("n_mamba_heads", "mamba_headdim", "mamba_expand")):
        if all(isinstance(d.get(x), int) for x in (heads_k, dim_k, exp_k)) and isinstance(d.get("hidden_size"), int) \
                and d.get("model_type") not in ("zamba",):
            inner = d[exp_k] * d["hidden_size"]
            if d[heads_k] * d[dim_k] != inner and inner % d[dim_k] == 0:
                d[heads_k] = inner // d[dim_k]
    if isinstance(d.get("mamba_d_ssm"), int) and isinstance(d.get("hidden_size"), int):
        d["mamba_d_ssm"] = d.get("mamba_expand", 2) * d["hidden_size"]
    # a few classes default head_dim / num_key_value_heads to None but read them as numbers (Hub
    # files carry them): give the usual values
    heads = d.get("num_attention_heads")
    if isinstance(heads, int) and isinstance(d.get("hidden_size"), int):
        if "head_dim" in d and d["head_dim"] is None:
            d["head_dim"] = d["hidden_size"] // heads
        if "num_key_value_heads" in d and d["num_key_value_heads"] is None:
            d["num_key_value_heads"] = heads
    if rope_is_head:
        d["head_dim"] = d["qk_rope_head_dim"]
    if isinstance(d.get("swa_head_dim"), int) and isinstance(d.get("qk_nope_head_dim"), int) and isinstance(d.get("qk_rope_head_dim"), int):
        d["swa_head_dim"] = d["qk_nope_head_dim"] + d["qk_rope_head_dim"]
    # multi-head latent attention: qk_head_dim is nope + rope
    if "qk_head_dim" in d and isinstance(d.get("qk_nope_head_dim"), int) and isinstance(d.get("qk_rope_head_dim"), int):
        d["qk_head_dim"] = d["qk_nope_head_dim"] + d["qk_rope_head_dim"]
    # special token ids must index the shrunk vocabulary
    vocab = d.get("vocab_size")
    if isinstance(vocab, int):
        used = 0
        for k in sorted(d):
            if k.endswith("_token_id") or k.endswith("_token_index") or k in ("decoder_start_token_id", "mask_index", "unk_index", "eod_token_id"):
                v = d[k]
                if isinstance(v, int) and not isinstance(v, bool) and v >= vocab:
                    used += 1
                    d[k] = vocab - used
                elif isinstance(v, list):
                    new = []
                    for x in v:
                        if isinstance(x, int) and x >= vocab:
                            used += 1
                            x = vocab - used
                        new.append(x)
                    d[k] = new
    return d


def fix_mrope(td):
    """M-RoPE: the sections must sum to half the rotary dimension. Modeling files that read
    `rope_parameters.get("mrope_section", <default>)` get the section written out (Hub files carry it)."""
    from transformers import CONFIG_MAPPING

    rope = td.get("rope_parameters")
    if not isinstance(rope, dict):
        return
    sec = rope.get("mrope_section")
    if sec is None:
        try:
            mod = importlib.import_module(CONFIG_MAPPING[td["model_type"]].__module__.replace(".configuration_", ".modeling_"))
            src = Path(inspect.getsourcefile(mod)).read_text()
        except Exception:
            return
        m = re.search(r'rope_parameters\.get\("mrope_section",\s*\[([0-9, ]+)\]', src)
        if not m:
            return
        sec = [int(x) for x in m.group(1).split(",")]
    head = td.get("qk_rope_head_dim") or td.get("head_dim") or td["hidden_size"] // td["num_attention_heads"]
    rot = int(head * rope.get("partial_rotary_factor", td.get("partial_rotary_factor") or 1.0))
    half = rot // 2
    if sum(sec) == half:
        return
    new = [max(1, half * x // sum(sec)) for x in sec]
    new[0] += half - sum(new)
    td["rope_parameters"] = dict(rope, mrope_section=new)


def layer_count_field(d):
    for k in ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "layers"):
        if isinstance(d.get(k), int) and not isinstance(d.get(k), bool):
            return k
    if isinstance(d.get("layers_block_type"), list) and "num_hidden_layers" in d:
        d["num_hidden_layers"] = len(d["layers_block_type"])
        return "num_hidden_layers"
    return None


def select_layers(d, want=None):
    """Cuts the layer count to a few layers that still contain every kind of `layer_types` (a prefix
    when one of at most 4 layers has every kind, else layers 0, 1, the first of each kind and the one
    after the last of those), cutting every per-layer list with the same indices. `want` forces the
    count (for classes without layer_types)."""
    key = layer_count_field(d)
    if key is None:
        if isinstance(d.get("layers_block_type"), list):
            key = "_count"
            d[key] = len(d["layers_block_type"])
        else:
            return d
    old = d[key]
    types = next((d[k] for k in ("layer_types", "layers_block_type") if isinstance(d.get(k), list)), None)
    if isinstance(types, list) and len(types) == old and old > 0:
        kinds = list(dict.fromkeys(types))
        end = max(types.index(k) for k in kinds) + 1
        firsts = {types.index(k) for k in kinds}
        if want is not None:
            idx = list(range(min(want, old)))
        elif end <= 4:
            idx = list(range(max(end, min(2, old))))
        else:  # the first two layers, the first layer of each kind and the one after the last of them
            idx = sorted(i for i in firsts | {0, 1, max(firsts) + 1} if i < old)
    else:
        idx = list(range(min(want or 2, old)))
    d[key] = len(idx)
    where = {old_i: new_i for new_i, old_i in enumerate(idx)}
    for k in list(d):
        v = d[k]
        if isinstance(v, dict) and v and all(isinstance(x, int) or (isinstance(x, str) and x.isdigit()) for x in v):
            # per-layer settings keyed by layer index (per_layer_config): keep the kept layers, renumbered
            d[k] = {(str(where[int(x)]) if isinstance(x, str) else where[int(x)]): y for x, y in v.items() if int(x) in where}
    for k in list(d):
        v = d[k]
        if isinstance(v, list) and len(v) == old and old > 2 and "token" not in k:
            d[k] = [v[i] for i in idx]
    d.pop("_count", None)
    return d


# Per-type overrides. Keys: "text" (fields set on the text config dict after the generic shrink),
# "top" (fields on the top-level dict), "layers" (layer count forced), "fn" (callable(dict) for edits
# beyond that), "note" (documented in the results). Applied after the generic shrink.
def _float32_modules(suffix):
    """A post-build hook keeping modules whose class name ends with `suffix` in float32 (routers
    that cast their input to float32 on purpose)."""
    def post(model):
        hit = [m for m in model.modules() if type(m).__name__.endswith(suffix)]
        for m in hit:
            m.float()
        return f"{len(hit)} {suffix} modules kept in float32 (they cast their input to float32)"
    return post


def _patch_bloom():
    from transformers.models.bloom import modeling_bloom as mb

    mb.GeLUFunction.apply = staticmethod(mb.bloom_gelu_forward)
    return "GeLUFunction (custom autograd, no jvp) replaced by its forward, bloom_gelu_forward"


def _patch_recurrent_gemma():
    import torch
    from transformers.models.recurrent_gemma import modeling_recurrent_gemma as mr

    mr.SqrtBoundDerivative.apply = staticmethod(torch.sqrt)
    return "SqrtBoundDerivative (custom autograd, no jvp) replaced by its forward, torch.sqrt"


def _patch_yoso():
    import math

    import torch
    from transformers.models.yoso import modeling_yoso as my

    def cumulation(query_mask, key_mask, query, key, value, config):
        expectation = (1 - torch.acos(torch.matmul(query, key.transpose(-1, -2))) / math.pi) ** config["hash_code_len"]
        expectation = expectation * query_mask[:, :, None] * key_mask[:, None, :]
        return torch.matmul(expectation, value)

    my.YosoCumulation.apply = staticmethod(cumulation)
    return "YosoCumulation (custom autograd, no jvp) replaced by its forward (the expectation path, no hashing)"


def _patch_reformer():
    from transformers.models.reformer import modeling_reformer as mr

    class Ctx:
        def save_for_backward(self, *a):
            pass

    mr._ReversibleFunction.apply = staticmethod(lambda *a: mr._ReversibleFunction.forward(Ctx(), *a))
    return "_ReversibleFunction (custom autograd, no jvp) replaced by its forward"


def _patch_fsmt():
    import torch
    from transformers.models.fsmt import modeling_fsmt as mf

    mf.fill_with_neg_inf = lambda t: t.fill_(torch.finfo(t.dtype).min)
    return "fill_with_neg_inf fills in the tensor's own dtype (it casts to float32 first, which overflows in float64)"


def _unmeasurable(why):
    def measure(loaded, notes):
        raise Unmeasurable(why)
    return measure


def _decoder_tower(path, note):
    """The text tower is a decoder whose cross-attention reads an image/audio encoder: measured
    alone over its own positions, with fixed random encoder states (no derivative flows there)."""
    def measure(loaded, notes):
        import torch

        conf = loaded
        for k in path.split("."):
            conf = getattr(conf, k)
        model = build_model(conf)
        model.to(torch.float64).eval()
        redraw(model, notes)
        params = inspect.signature(model.forward).parameters
        dim = None
        for k in ("cross_attention_hidden_size", "encoder_hidden_size", "d_model", "hidden_size"):
            v = getattr(conf, k, None)
            if isinstance(v, int) and not isinstance(v, bool):
                dim = v
                break
        gen = torch.Generator().manual_seed(seed_of("encoder states"))
        enc = torch.randn(1, 8, dim, generator=gen, dtype=torch.float64)
        extra = {}
        if "encoder_hidden_states" in params:
            extra["encoder_hidden_states"] = lambda B: enc.expand(B, 8, dim)
        notes.append(note)
        return measure_decoder_only(model, conf, notes, extra)
    return measure


def _whisper(loaded, notes):
    """Whisper: the encoder's positions are those after its convolution front-end; conv2's output is
    replaced by the measuring embeddings (a forward hook), so the encoder is measured from there."""
    import torch

    conf = loaded
    model = build_model(conf)
    model.to(torch.float64).eval()
    redraw(model, notes)
    enc = model.get_encoder()
    n_in = conf.max_source_positions * enc.conv1.stride[0] * enc.conv2.stride[0]

    def call(model, ex, dx, extra):
        feats = torch.zeros(ex.shape[0], conf.num_mel_bins, n_in, dtype=torch.float64)
        h = enc.conv2.register_forward_hook(lambda m, a, o: ex.transpose(1, 2))
        try:
            return model(input_features=feats, decoder_inputs_embeds=dx, output_hidden_states=True, use_cache=False,
                         return_dict=True)
        finally:
            h.remove()

    notes.append("encoder measured from its post-convolution embeddings (conv2's output replaced)")
    return measure_encoder_decoder(model, conf, notes, {}, call=call, n_enc=conf.max_source_positions,
                                   enc_dim=conf.d_model, dec_dim=conf.d_model)


def _encdec_ids(loaded, notes):
    """Encoder-decoders whose masks come from the ids (the decoder is causal only when it gets
    decoder_input_ids): the encoder's and decoder's token embeddings are patched instead."""
    import torch

    conf = text_config_of(loaded)
    model = build_model(conf)
    model.to(torch.float64).eval()
    redraw(model, notes)
    enc_emb = model.get_encoder().embed_tokens
    dec_emb = model.get_decoder().embed_tokens

    def call(model, ex, dx, extra):
        ids = torch.full(ex.shape[:2], 5, dtype=torch.long)
        dids = torch.full(dx.shape[:2], 5, dtype=torch.long)
        with patched_embedding(enc_emb, ex), patched_embedding(dec_emb, dx):
            return model(input_ids=ids, decoder_input_ids=dids, output_hidden_states=True, use_cache=False,
                         return_dict=True)

    notes.append("fed with ids, token embeddings patched (with decoder_inputs_embeds the decoder gets no causal mask)")
    return measure_encoder_decoder(model, conf, notes, {}, call=call, enc_dim=enc_emb.weight.shape[1],
                                   dec_dim=dec_emb.weight.shape[1])


def _zeros(*shape, dtype="float64"):
    """An extra model input: zeros of shape (batch, *shape)."""
    def make(B):
        import torch

        return torch.zeros(B, *shape, dtype=getattr(torch, dtype))
    return make


def _const(shape, value):
    """An extra model input that does not depend on the batch."""
    def make(B):
        import torch

        return torch.full(shape, value, dtype=torch.float64)
    return make


def _set(path, value):
    """An override function setting d[a][b]... = value."""
    def fn(d):
        keys = path.split(".")
        for k in keys[:-1]:
            d = d.setdefault(k, {})
        d[keys[-1]] = value
    return fn


def _all(*fns):
    def fn(d):
        for f in fns:
            f(d)
    return fn


def _drop_out_features(key):
    """An override function dropping a sub-config's backbone outputs (`out_features`, `out_indices`,
    `stage_names`): they name stages that the shrunk layer count no longer has."""
    def fn(d):
        for k in ("out_features", "out_indices", "stage_names"):
            d.get(key, {}).pop(k, None)
    return fn


def _input_embeddings(path):
    """A post-build hook giving a model whose class leaves `get_input_embeddings` out its token
    embedding module (at `path`, dotted)."""
    def post(model):
        emb = model
        for k in path.split("."):
            emb = getattr(emb, k)
        model.get_input_embeddings = lambda: emb
        return f"get_input_embeddings is {path} (the class does not say)"
    return post


def _layer_outputs(path, then=None):
    """A post-build hook making the model's hidden states the input of its first layer and the output
    of every layer of the ModuleLists at `path` (dotted; several joined by "+", run in that order),
    read by hooks (for classes whose output capture skips some layers, Sam3-LiteText's RepMixer
    blocks, or gives no embedding output, LXMERT)."""
    import functools
    import types

    def post(model):
        layers = []
        for one in path.split("+"):
            mods = model
            for k in one.split("."):
                mods = getattr(mods, k)
            layers += list(mods)
        orig = model.forward

        @functools.wraps(orig)
        def forward(*args, **kwargs):
            got = []
            hooks = [layers[0].register_forward_pre_hook(lambda m, a: got.append(_first_tensor(a)))]
            hooks += [layer.register_forward_hook(lambda m, a, o: got.append(_first_tensor(o))) for layer in layers]
            try:
                orig(*args, **kwargs)
            finally:
                for h in hooks:
                    h.remove()
            return types.SimpleNamespace(hidden_states=tuple(got))

        model.forward = forward
        note = f"hidden states read by hooks: the input of the first layer, the output of each of {path}"
        return f"{then(model)}; {note}" if then else note
    return post


def _ones_mask():
    """An attention_mask of ones, as a tokenizer passes it (some text towers are causal only with one)."""
    def make(B):
        import torch

        return torch.ones(B, N, dtype=torch.long)
    return make


OVERRIDES = {
    # text towers of contrastive, retrieval and detection models, and text-task encoders
    "aimv2": {"extra": {"attention_mask": _ones_mask()},
              "note": "attention_mask of ones passed (Aimv2TextModel builds its causal mask only from one)"},
    "videoprism": {"extra": {"attention_mask": _ones_mask()}, "trim": True,
                   "note": "attention_mask of ones passed (VideoPrismTextModel builds its causal mask only from "
                           "one); the class token it appends after the text is cut from the hidden states"},
    "bros": {"extra": {"bbox": _zeros(N, 4)}, "text": {"dim_bbox_projection": HEAD_DIM},
             "note": "bbox all zero; dim_bbox_projection 16 (the head size)"},
    "lilt": {"text": {"hidden_size": 48}, "note": "hidden_size 48 (six layout embeddings of hidden_size // 6)"},
    "layoutlmv3": {"text": {"coordinate_size": 4, "shape_size": 8},
                   "note": "coordinate_size 4, shape_size 8 (4 x 4 + 2 x 8 = hidden_size 32)"},
    "clvp": {"text": {"hidden_size": 64}, "note": "hidden_size 64 (the rotary dimension is at least 32 per head)"},
    "fun_asr_nano": {"fn": _set("adaptor_config.intermediate_size", HIDDEN // 4)},
    "grounding-dino": {"fn": _drop_out_features("backbone_config")},
    "mm-grounding-dino": {"fn": _drop_out_features("backbone_config")},
    "tipsv2": {"fn": _drop_out_features("vision_config")},
    "layoutlmv2": {"measure": _unmeasurable("LayoutLMv2Model needs detectron2 (its visual backbone), which the test "
                                            "environment does not install")},
    "lxmert": {"post": _layer_outputs("encoder.layer+encoder.x_layers"),
               "extra": {"visual_feats": _zeros(4, 2048), "visual_pos": _zeros(4, 4)},
               "text": {"l_layers": 2, "x_layers": 1, "r_layers": 1},
               "note": "2 language layers, 1 cross-modality layer; 4 zero visual features"},
    "colpali": {"measure": _decoder_tower("vlm_config.text_config", "text tower: the VLM's language model "
                                                                    "(vlm_config.text_config)")},
    "colqwen2": {"measure": _decoder_tower("vlm_config.text_config", "text tower: the VLM's language model "
                                                                     "(vlm_config.text_config)"),
                 "fn": _set("vlm_config.text_config.rope_parameters.mrope_section", [2, 3, 3])},
    "colmodernvbert": {"measure": _decoder_tower("vlm_config.text_config", "text tower: the VLM's language model "
                                                                           "(vlm_config.text_config)")},
    "sam3_lite_text": {"post": _layer_outputs("layers", _input_embeddings("embeddings.token_embedding")),
                       "text": {"num_hidden_layers": 3},
                       "note": "3 layers: RepMixer (convolutions), attention, RepMixer"},
    "fsmt": {"measure": _encdec_ids, "patch": lambda: _patch_fsmt()},
    "musicgen_melody": {"measure": _unmeasurable("MusicGen Melody prepends the conditioning (text encoder states, chroma) to "
                                                 "the decoder sequence: no separate text stack to measure")},
    "hrm_text": {"text": {"num_hidden_layers": 6, "num_layers_per_stack": 1, "H_cycles": 2, "L_cycles": 2},
                 "note": "one layer per stack, H_cycles 2, L_cycles 2: 6 layer invocations (num_hidden_layers counts them)"},
    "idefics": {"extra": {"image_encoder_embeddings": _zeros(1, 4, HIDDEN), "image_attention_mask": _zeros(N, 1, dtype="long")},
                "note": "zero image embeddings, image_attention_mask all 0 (text attends no image: the gated cross-attention is off)"},
    "udop": {"extra": {"bbox": _zeros(N, 4)},
             "note": "bbox all zero"},
    "pi0": {"measure": _decoder_tower("vlm_config.text_config", "text tower: the PaliGemma language model (vlm_config.text_config)")},
    "voxtral_realtime": {"extra": {"t_cond": _const((1, 1, HIDDEN), 0.1)},
                         "note": "t_cond (the delay-token time embedding) passed as a constant"},
    "apertus1p5": {"fn": _all(_set("vision_config.codebook_size", 16), _set("audio_config.codebook_size", 16),
                              _set("image_token_offset", 64), _set("audio_token_offset", 80)),
                   "note": "image/audio token ranges moved into the shrunk vocabulary"},
    "molmo2": {"fn": _set("adapter_config.vision_feature_layer", [1, 0]),
               "note": "adapter_config.vision_feature_layer [1, 0] (the vision tower has 2 layers)"},
    "gemma4_assistant": {"skip": "assistant (draft) model: every layer reads the KV states of its target model "
                                 "(shared_kv_states; the class requires every layer shared); no stand-alone text stack"},
    "gemma4_unified_assistant": {"measure": _unmeasurable("assistant (draft) model: every layer reads the KV states of its "
                                                          "target model (shared_kv_states); there is no stand-alone text stack")},
    "funnel": {"measure": _unmeasurable("Funnel Transformer pools the sequence between blocks (hidden states at 56, 28, 14 "
                                        "positions): no per-position layer stack")},
    "perceiver": {"measure": _unmeasurable("Perceiver: the inputs are cross-attended into a fixed set of latents; the layers "
                                           "run over latents, not positions")},
    "chameleon": {"top": {"vocabulary_map": {"<image>": 120}}, "note": "vocabulary_map {<image>: 120} (the default is none)"},
    "cohere_compass": {"fn": _set("text_config.rope_parameters", {
        "full_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}})},
    "cohere_compass_text": {"fn": _set("rope_parameters", {
        "full_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}})},
    "dory": {"text": {"num_hidden_layers": 6, "n_input_layers": 2, "n_recurrent_layers": 2, "n_output_layers": 2,
                      "layer_types": ["sliding_attention", "mlp", "sliding_attention", "mlp", "full_attention", "mlp"]},
             "note": "3 decoder layers (input, recurrent x n_recurrent_loops 2, output): sliding, sliding, full; "
                     "serialized as 6 blocks (attention, mlp)"},
    "dots3_note": {"text": {"head_dim": 24}, "fn": _all(_set("vision_config.adapter_out_dim", HIDDEN),
                                                       _set("audio_config.adapter_out_dim", HIDDEN)),
                   "note": "head_dim 24 = qk_nope_head_dim 16 + qk_rope_head_dim 8 (sliding layers)"},
    "dots3_note_text": {"text": {"head_dim": 24}, "note": "head_dim 24 = qk_nope_head_dim 16 + qk_rope_head_dim 8 (sliding layers)"},
    "reformer": {"patch": lambda: _patch_reformer(),
                 "text": {"attn_layers": ["local", "local"], "axial_pos_embds_dim": [16, 16], "axial_pos_shape": [8, 8],
                          "local_attn_chunk_length": 8, "lsh_attn_chunk_length": 8},
                 "note": "attn_layers local, local (LSH layers hash the data: not measurable); chunk length 8"},
    "xmod": {"post": lambda model: (model.set_default_language(model.config.languages[0]),
                                    "default language " + model.config.languages[0])[1]},
    "pegasus_x": {"text": {"block_size": 8, "num_global_tokens": 2},
                  "note": "block_size 8 (local blocks bind at n = 56), num_global_tokens 2"},
    "blt": {"measure": _unmeasurable("Byte Latent Transformer: entropy-based patching picks the patch boundaries from "
                                     "the bytes (data-dependent), and byte and patch sequences differ in length")},
    "whisper": {"measure": _whisper, "text": {"max_source_positions": N},
                "note": "max_source_positions 56 (the encoder length after the convolutions)"},
    # text towers that are decoders over an image encoder: measured alone
    "vision-encoder-decoder": {"measure": _decoder_tower("decoder", "text tower: the decoder (cross-attention reads fixed encoder states)")},
    "pix2struct": {"measure": _decoder_tower("text_config", "text tower: the decoder (cross-attention reads fixed encoder states)")},
    "pp_formulanet": {"measure": _decoder_tower("text_config", "text tower: the decoder (cross-attention reads fixed encoder states)")},
    # custom autograd functions without a forward-mode rule: replaced by their (differentiable) forward
    "bloom": {"patch": _patch_bloom},
    "recurrent_gemma": {"patch": _patch_recurrent_gemma, "text": {"num_hidden_layers": 4},
                        "note": "4 layers: recurrent, recurrent, attention, recurrent"},
    "yoso": {"patch": _patch_yoso},
    "mra": {"measure": _unmeasurable("mra2_attention needs its CUDA kernel (on CPU it returns zeros: no attention at all)")},
    "inkling2": {"post": _float32_modules("TopKRouter")},
    "inkling2_text": {"post": _float32_modules("TopKRouter")},
    "inkling2_loop": {"post": _float32_modules("TopKRouter")},
    "inkling2_loop_text": {"post": _float32_modules("TopKRouter")},
    # hybrid patterns the class defaults do not show
    "lfm2": {"text": {"num_hidden_layers": 4, "layer_types": ["conv", "conv", "full_attention", "conv"]},
             "note": "layer_types set: conv, conv, full_attention, conv"},
    "lfm2_vl": {"text": {"num_hidden_layers": 4, "layer_types": ["conv", "conv", "full_attention", "conv"]},
                "note": "layer_types set: conv, conv, full_attention, conv"},
    "lfm2_moe": {"text": {"num_hidden_layers": 4, "layer_types": ["conv", "conv", "full_attention", "conv"],
                          "num_dense_layers": 1},
                 "note": "layer_types set: conv, conv, full_attention, conv"},
    "jamba": {"text": {"num_hidden_layers": 4, "attn_layer_period": 2, "attn_layer_offset": 1,
                       "expert_layer_period": 2, "expert_layer_offset": 1},
              "note": "attn_layer_period 2, attn_layer_offset 1: mamba, attention, mamba, attention"},
    "bamba": {"text": {"num_hidden_layers": 3, "attn_layer_indices": [1]},
              "note": "attn_layer_indices [1]: mamba, attention, mamba"},
    "granitemoehybrid": {"text": {"num_hidden_layers": 3,
                                  "layer_types": ["linear_attention", "full_attention", "linear_attention"]},
                         "note": "layer_types set: mamba, attention, mamba"},
    "zamba": {"text": {"num_hidden_layers": 4, "attn_layer_period": 2, "attn_layer_offset": 1,
                       "layers_block_type": ["linear_attention", "hybrid", "linear_attention", "hybrid"]},
              "note": "layers_block_type set: mamba, hybrid, mamba, hybrid"},
    "zamba2": {"text": {"num_hidden_layers": 4, "hybrid_layer_ids": [1, 3],
                        "layers_block_type": ["linear_attention", "hybrid", "linear_attention", "hybrid"]},
               "note": "layers_block_type set: mamba, hybrid, mamba, hybrid"},
    # sliding windows the classes support but leave off by default; layer_types dropped so the
    # class derives it from use_sliding_window / max_window_layers
    **{t: {"text": {"num_hidden_layers": 3, "use_sliding_window": True, "max_window_layers": 1, "sliding_window": WINDOW},
           "drop": ["layer_types"], "note": "use_sliding_window true, sliding_window 8, max_window_layers 1 (layer_types derived)"}
       for t in ("qwen2", "qwen3", "qwen2_moe", "qwen3_moe")},
    # block-sparse and local encoders: blocks small enough to bind at n = 56
    "big_bird": {"text": {"block_size": 4, "num_random_blocks": 1},
                 "note": "block_size 4, num_random_blocks 1 (block-sparse binds at n = 56; eval mode draws no random blocks)"},
    "bigbird_pegasus": {"text": {"block_size": 4, "num_random_blocks": 1},
                        "note": "block_size 4, num_random_blocks 1 (block-sparse binds at n = 56; eval mode draws no random blocks)"},
    "longt5": {"text": {"local_radius": 7, "global_block_size": 4}, "note": "local_radius 7 (blocks of 8), global_block_size 4"},
    "gemma3n": {"text": {"num_hidden_layers": 8, "num_kv_shared_layers": 3, "intermediate_size": [64] * 8,
                         "activation_sparsity_pattern": [0.0] * 8,
                         "layer_types": ["sliding_attention"] * 4 + ["full_attention"] + ["sliding_attention"] * 2 + ["full_attention"]},
                "note": "8 layers, the last 3 reuse the KV of the last sliding / full layer before them (num_kv_shared_layers 3)"},
    "gemma3n_text": {"text": {"num_hidden_layers": 8, "num_kv_shared_layers": 3, "intermediate_size": [64] * 8,
                              "activation_sparsity_pattern": [0.0] * 8,
                              "layer_types": ["sliding_attention"] * 4 + ["full_attention"] + ["sliding_attention"] * 2 + ["full_attention"]},
                     "note": "8 layers, the last 3 reuse the KV of the last sliding / full layer before them (num_kv_shared_layers 3)"},
    # fields the defaults leave unset or inconsistent (published configs carry them)
    "dbrx": {"fn": _all(_set("attn_config.rope_theta", 10000.0), _set("attn_config.clip_qkv", 8.0)),
             "note": "attn_config.rope_theta and clip_qkv set (the class defaults fail)"},
    "deepseek_ocr2": {"text": {"mlp_layer_types": ["dense", "sparse"]}},
    "ernie4_5_vl_moe": {"fn": _set("text_config.rope_parameters.mrope_section", [3, 3, 2])},
    "hunyuan_vl": {"fn": _set("text_config.rope_parameters.mrope_section", [2, 2, 2, 2])},
    "qwen4_exp": {"text": {"indexer_n_heads": 2, "indexer_kv_heads": 1, "indexer_head_dim": 16,
                           "indexer_budget": 2 * N, "indexer_compress_ratio": 4},
                  "note": "indexer_budget 112 >= n (compress ratio 4): the data-dependent selection keeps every block"},
    "qwen4_exp_text": {"text": {"indexer_n_heads": 2, "indexer_kv_heads": 1, "indexer_head_dim": 16,
                                "indexer_budget": 2 * N, "indexer_compress_ratio": 4},
                       "note": "indexer_budget 112 >= n (compress ratio 4): the data-dependent selection keeps every block"},
    "step3p7": {"text": {"sliding_window": WINDOW, "layer_types": ["full_attention", "sliding_attention"]},
                "note": "layer_types full, sliding with sliding_window 8 (the default has no window and fails)"},
    "xlstm": {"text": {"num_blocks": 2}},
    "cpmant": {"text": {"prompt_length": 0}},
    "gpt_neo": {"text": {"attention_types": [[["global", "local"], 1]]}, "note": "attention_types [[[global, local], 1]]"},
    "deepseek_v4": {"fn": _set("compress_rates", {"compressed_sparse_attention": 4, "heavily_compressed_attention": 16}),
                    "note": "compress_rates: heavily compressed 128 -> 16 so compressed blocks exist at n = 56"},
}


def text_dict(d):
    """The dict holding the language model: text_config where there is one."""
    if isinstance(d.get("text_config"), dict):
        return d["text_config"]
    return d


def shrunk_config(t):
    """The shrunk config object of type t (not yet saved), and the notes on what was set."""
    from transformers import CONFIG_MAPPING

    cls = CONFIG_MAPPING[t]
    ov = OVERRIDES.get(t, {})
    try:
        base = cls(**ov.get("ctor", {}))
    except Exception:
        base = cls.from_dict(ov.get("ctor", {}))
    d = base.to_dict()
    for k in ("transformers_version", "architectures", "_name_or_path", "id2label", "label2id", "dtype"):
        d.pop(k, None)
    shrink_dict(d)
    td = text_dict(d)
    select_layers(td, ov.get("layers"))
    for k in ("encoder", "decoder"):
        if isinstance(d.get(k), dict) and "model_type" in d[k]:
            select_layers(d[k], ov.get("layers"))
    for k in ("encoder_layers", "decoder_layers", "num_decoder_layers", "num_encoder_layers"):
        for dd in (d, td):
            if isinstance(dd.get(k), int) and dd[k] > 2:
                dd[k] = 2
    for k in ov.get("drop", ()):
        td.pop(k, None)  # let the class derive it (the saved file then holds what Transformers derives)
    td.update(ov.get("text", {}))
    fix_mrope(td)
    d.update(ov.get("top", {}))
    if "fn" in ov:
        ov["fn"](d)
    for _ in range(6):
        try:
            cfg = cls.from_dict(d)
            break
        except Exception as e:
            if not _match_sizes(d, str(e)):
                raise
    return cfg, ov.get("note")


def _match_sizes(d, message):
    """Composite configs validate that a sub-config's size equals another's ("`a.b` (1024) must
    equal `c.d` (32)"): set the first to the second. True when something was changed."""
    m = re.search(r"`?([A-Za-z_][\w.]*)`?\s*\((\d+)\)\s*must (?:equal|match)\s*`?([A-Za-z_][\w.]*)`?\s*\((\d+)\)", message)
    if not m:
        # "a must match b": both fields of one sub-config
        m2 = re.search(r"\b([a-z_]+) must (?:equal|match) ([a-z_]+)\b", message)
        if not m2:
            return False
        a, b = m2.group(1), m2.group(2)
        hit = []

        def walk(x):
            if isinstance(x, dict):
                if isinstance(x.get(a), int) and isinstance(x.get(b), int) and x[a] != x[b]:
                    x[a] = x[b]
                    hit.append(1)
                for v in x.values():
                    walk(v)
        walk(d)
        return bool(hit)
    path, old, value = m.group(1).split("."), int(m.group(2)), int(m.group(4))
    changed = False

    def visit(x):
        nonlocal changed
        if not isinstance(x, dict):
            return
        if len(path) == 1 and x.get(path[0]) == old:
            x[path[0]] = value
            changed = True
        for v in x.values():
            visit(v)

    def visit_path(x):
        nonlocal changed
        if not isinstance(x, dict):
            return
        y = x
        for k in path[:-1]:
            y = y.get(k) if isinstance(y, dict) else None
        if isinstance(y, dict) and y.get(path[-1]) == old:
            y[path[-1]] = value
            changed = True
            return
        for v in x.values():
            visit_path(v)

    if len(path) > 1:
        visit_path(d)
    else:
        visit(d)
    return changed


# ---------------------------------------------------------------------------------------------
# Building the text tower
# ---------------------------------------------------------------------------------------------

def text_config_of(cfg):
    tc = getattr(cfg, "text_config", None)
    if tc is not None and hasattr(tc, "model_type"):
        return tc
    return cfg


def _candidate_classes(conf):
    """Model classes declared for this config class in its own package: base models first."""
    pkg = conf.__class__.__module__.rsplit(".", 1)[0]
    mods = [importlib.import_module(pkg)]
    try:
        import pkgutil

        for info in pkgutil.iter_modules(mods[0].__path__):
            if info.name.startswith("modeling_") and not info.name.startswith(("modeling_tf_", "modeling_flax_")):
                try:
                    mods.append(importlib.import_module(f"{pkg}.{info.name}"))
                except Exception:
                    pass
    except Exception:
        pass
    out = []
    for mod in mods:
        for name in dir(mod):
            if not name[0].isupper() or "Config" in name or "Tokenizer" in name or "Processor" in name:
                continue
            try:
                obj = getattr(mod, name)
            except Exception:
                continue
            try:
                if inspect.isclass(obj) and getattr(obj, "config_class", None) is type(conf) and obj not in out:
                    out.append(obj)
            except Exception:  # placeholder objects of missing backends raise on attribute access
                continue

    def rank(c):
        n = c.__name__
        if n.startswith("PreTrained") or n.endswith("PreTrainedModel"):
            return 9
        if n.endswith("Model") and "For" not in n:
            return 0
        if n.endswith("ForCausalLM"):
            return 1
        if n.endswith("ForMaskedLM"):
            return 2
        return 5

    return sorted((c for c in out if rank(c) < 9), key=lambda c: (rank(c), c.__name__))


def build_model(conf):
    """A base model (no LM head) for `conf`: AutoModel's class, else a class of its package."""
    from transformers import AutoModel
    from transformers.models.auto import modeling_auto as ma

    conf._attn_implementation = "eager"
    try:
        conf._experts_implementation = "eager"  # grouped_mm has no float64 kernel
    except Exception:
        pass
    kw = {"attn_implementation": "eager", "experts_implementation": "eager"}
    err = None
    name = ma.MODEL_MAPPING_NAMES.get(conf.model_type)
    if isinstance(name, (tuple, list)):
        name = name[0]
    if name:
        # the class AutoModel would pick, without AutoModel's walk over every config class
        import transformers

        try:
            cls = getattr(transformers, name)
        except Exception:
            cls = None
        try:
            return cls._from_config(conf, **kw) if cls is not None else AutoModel.from_config(conf, **kw)
        except Exception as e:  # try the package's own classes
            err = e
    for c in _candidate_classes(conf):
        try:
            return c._from_config(conf, **kw)
        except Exception as e:
            err = err or e
            try:
                return c(conf)
            except Exception:
                pass
    if err is None:
        raise Unmeasurable(f"no model class for {conf.model_type}")
    raise err


def short(e):
    if e is None:
        return "no class"
    s = f"{type(e).__name__}: {e}"
    s = " ".join(s.split())
    return s[:220]


def redraw(model, notes):
    """hasseflow.redraw: re-draws parameters that would make the measure short (all-zero tensors,
    underflowing SSM / linear-attention decays), notes of what it re-drew appended to `notes`."""
    import hasseflow

    notes += hasseflow.redraw(model)


# ---------------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------------

def find_layers(model, count):
    """The ModuleList of `count` layers whose outputs are the hidden states."""
    import torch.nn as nn

    best = None
    for name, mod in model.named_modules():
        if isinstance(mod, nn.ModuleList) and len(mod) == count:
            leaf = name.rsplit(".", 1)[-1]
            score = (leaf in ("layers", "layer", "h", "blocks", "block", "decoder_layers", "mamba_layers"), -name.count("."))
            if best is None or score > best[0]:
                best = (score, mod)
    return None if best is None else best[1]


def _first_tensor_arg(args, kwargs):
    import torch

    if args and isinstance(args[0], torch.Tensor):
        return ("a", 0)
    for k in ("hidden_states", "hidden_state", "x", "inputs_embeds", "hidden"):
        if isinstance(kwargs.get(k), torch.Tensor):
            return ("k", k)
    return None


def _first_tensor(out):
    import torch

    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, (tuple, list)):
        for x in out:
            if isinstance(x, torch.Tensor):
                return x
    for k in ("hidden_states", "last_hidden_state"):
        x = getattr(out, k, None)
        if isinstance(x, torch.Tensor):
            return x
    return None


class _Stop(Exception):
    pass


def _bp_axes(shape, batch, seq):
    """(batch axis, position axis) of a hidden state: batch-first (.., B, T, ..), sequence-first
    (.., T, B, ..) or channels-first (B, C, T) layouts; None when none fits."""
    for at in range(len(shape)):
        if shape[at] != batch:
            continue
        for pos in (at + 1, at - 1) + tuple(range(len(shape))):  # channels-first layouts: (B, C, T)
            if 0 <= pos < len(shape) and pos != at and shape[pos] == seq:
                return at, pos
    return None


def inject(run, entries, m):
    """One-layer adjacencies: each entry (layer module, offset, seq length) gets its own group of m batch
    rows; rows group * m + offset + k carry a random tangent at position k of the layer's input
    (a forward pre-hook), and the layer's output tangent gives A[q, k]. `run()` calls the model with
    a batch of len(entries) * m rows and no input tangent; it is cut short after the last entry.
    Returns one (seq, seq) bool tensor per entry, or raises Unmeasurable."""
    import torch
    import torch.autograd.forward_ad as fwAD

    got = {}
    failed = []
    handles = []
    seqs = [e[2] for e in entries]

    def pre(i, off, mod, args, kwargs):
        where = _first_tensor_arg(args, kwargs)
        if where is None:
            failed.append("layer input not found")
            return None
        h = args[0] if where[0] == "a" else kwargs[where[1]]
        ax = _bp_axes(h.shape, len(entries) * m, seqs[i])
        if h.dim() < 3 or ax is None:
            failed.append(f"layer input shape {tuple(h.shape)}")
            return None
        primal, tangent = fwAD.unpack_dual(h)
        gen = torch.Generator().manual_seed(seed_of(f"inject {i}"))
        add = torch.zeros_like(primal)
        view = add.movedim(ax, (0, 1))  # (batch, position, ...) view of the tangent
        for k in range(view.shape[1]):
            view[i * m + off + k, k] = torch.randn(view.shape[2:], generator=gen, dtype=h.dtype)
        new = fwAD.make_dual(primal, add if tangent is None else tangent + add)
        if where[0] == "a":
            return (new,) + tuple(args[1:]), kwargs
        kwargs = dict(kwargs)
        kwargs[where[1]] = new
        return args, kwargs

    def post(i, off, mod, args, kwargs, out):
        if i in got:
            return None
        h = _first_tensor(out)
        seq = seqs[i]
        ax = None if h is None else _bp_axes(h.shape, len(entries) * m, seq)
        if h is None or h.dim() < 3 or ax is None:
            failed.append("layer output not found")
            raise _Stop
        tg = fwAD.unpack_dual(h).tangent
        if tg is not None:
            tg = tg.movedim(ax, (0, 1))
        nz = nonzero(tg, len(entries) * m, seq)[i * m + off:i * m + off + seq]
        got[i] = nz.t().clone()
        if len(got) == len(entries):
            raise _Stop
        return None

    for i, (layer, off, _) in enumerate(entries):
        handles.append(layer.register_forward_pre_hook(lambda mod, a, k, i=i, off=off: pre(i, off, mod, a, k), with_kwargs=True))
        handles.append(layer.register_forward_hook(lambda mod, a, k, o, i=i, off=off: post(i, off, mod, a, k, o), with_kwargs=True))
    try:
        with torch.no_grad(), fwAD.dual_level():
            try:
                run()
            except _Stop:
                pass
    finally:
        for h in handles:
            h.remove()
    if failed or len(got) != len(entries):
        raise Unmeasurable(failed[0] if failed else "a layer did not run")
    return [got[i] for i in range(len(entries))]


def to_intervals(row):
    """A boolean row as inclusive [lo, hi] runs."""
    out = []
    for k, on in enumerate(row):
        if on:
            if out and out[-1][1] == k - 1:
                out[-1][1] = k
            else:
                out.append([k, k])
    return out


def nonzero(tg, rows, seq):
    """[row, position] booleans of a (rows, seq, ...) tangent (None: all false)."""
    import torch

    if tg is None:
        return torch.zeros(rows, seq, dtype=torch.bool)
    return tg.reshape(rows, seq, -1).ne(0).any(-1)


def hidden_states_of(out):
    for k in ("hidden_states", "all_hidden_states"):
        hs = getattr(out, k, None)
        if hs is not None:
            return hs
    if isinstance(out, (tuple, list)):
        for x in out:
            if isinstance(x, (tuple, list)) and len(x) > 1:
                return x
    return None


def input_embedding_dim(model, conf):
    emb = None
    try:
        emb = model.get_input_embeddings()
    except Exception:
        pass
    w = getattr(emb, "weight", None)
    if w is not None and w.dim() == 2:
        return emb, w.shape[1]
    for k in ("embedding_size", "hidden_size", "d_model", "n_embd", "dim", "embed_dim"):
        v = getattr(conf, k, None)
        if isinstance(v, int):
            return emb, v
    raise Unmeasurable("no input embedding dimension")


@contextlib.contextmanager
def patched_embedding(emb, value):
    """Makes the embedding module return `value` whatever ids it gets."""
    old = emb.forward
    emb.forward = lambda *a, **k: value
    try:
        yield
    finally:
        emb.forward = old


def token_ids(conf, batch, n, gen):
    import torch

    vocab = getattr(conf, "vocab_size", None) or VOCAB
    special = set()
    for k, v in conf.to_dict().items():
        if k.endswith("_token_id") or k.endswith("_id") or k.endswith("_index"):
            if isinstance(v, int) and not isinstance(v, bool):
                special.add(v)
            elif isinstance(v, list):
                special |= {x for x in v if isinstance(x, int)}
    pool = [i for i in range(3, vocab) if i not in special] or list(range(vocab))
    idx = torch.randint(0, len(pool), (n,), generator=gen)
    row = torch.tensor(pool)[idx]
    return row.unsqueeze(0).expand(batch, n).contiguous()


def run_stack(model, x, ids, mode, extra):
    """One forward call; `mode` is "embeds" (inputs_embeds) or "ids" (patched embedding)."""
    params = inspect.signature(model.forward).parameters
    kw = {k: v for k, v in extra.items() if not k.startswith("_")}
    kw = {k: (v(x.shape[0]) if callable(v) else v) for k, v in kw.items()}
    kw["output_hidden_states"] = True
    if "use_cache" in params:
        kw["use_cache"] = False
    if "return_dict" in params:
        kw["return_dict"] = True
    if mode == "embeds":
        kw["inputs_embeds"] = x
        return model(**kw)
    emb = model.get_input_embeddings()
    with patched_embedding(emb, x):
        return model(input_ids=ids, **kw)


def reach_rows(tangents, rows, seq):
    """Per hidden state, the (q, k) reach from a batch whose row k carries the tangent at k."""
    return [nonzero(tg, rows, seq)[:seq].t().clone() for tg in tangents]


def needs_injection(R):
    """Layers l >= 2 (1-based) whose kind R(l-1) -> R(l) does not determine."""
    return [l for l in range(2, len(R) + 1) if not infer(R[l - 2], R[l - 1])[1]]


def measure_decoder_only(model, conf, notes, extra, n=N):
    """R(l) and A(l) of a stack fed with embeddings (decoder-only models and encoders)."""
    import torch
    import torch.autograd.forward_ad as fwAD

    gen = torch.Generator().manual_seed(seed_of(conf.model_type))
    emb, dim = input_embedding_dim(model, conf)
    params = inspect.signature(model.forward).parameters
    mode = "embeds" if "inputs_embeds" in params and not extra.get("_ids") else "ids"
    if mode == "ids":
        notes.append("no inputs_embeds: embedding module patched")
    base = torch.randn(1, n, dim, generator=gen, dtype=torch.float64)
    ids1 = token_ids(conf, 1, n, gen)
    try:
        with torch.no_grad():
            out = run_stack(model, base, ids1, mode, extra)
    except Exception as e:
        if mode != "embeds":
            raise
        # some models need the ids themselves (per-layer embeddings looked up from input_ids)
        mode = "ids"
        notes.append(f"inputs_embeds refused ({short(e)[:80]}): embedding module patched")
        with torch.no_grad():
            out = run_stack(model, base, ids1, mode, extra)
    hs = hidden_states_of(out)
    if hs is None:
        raise Unmeasurable("the model returns no hidden states")
    hs = list(hs)
    if extra.get("_trim"):
        hs = [h[:, :n] for h in hs]
    axes = []  # where (batch, position) sit in each hidden state (AltUp stacks streams in front)
    for h in hs:
        ax = None
        if isinstance(h, torch.Tensor) and h.dim() >= 3:
            ax = _bp_axes(h.shape, 1, n)
        if ax is None:
            shape = tuple(h.shape) if isinstance(h, torch.Tensor) else type(h).__name__
            raise Unmeasurable(f"hidden state shape {shape} is not (batch, {n}, d)")
        axes.append(ax)
    if any(a != (0, 1) for a in axes):
        notes.append("hidden states not laid out (batch, position, d): read per position")
    L = len(hs) - 1
    x = base.expand(n, n, dim).contiguous()
    t = torch.zeros(n, n, dim, dtype=torch.float64)
    for k in range(n):
        t[k, k] = torch.randn(dim, generator=gen, dtype=torch.float64)
    with torch.no_grad(), fwAD.dual_level():
        out = run_stack(model, fwAD.make_dual(x, t), ids1.expand(n, n).contiguous(), mode, extra)
        tangents = [fwAD.unpack_dual(h).tangent for h in hidden_states_of(out)]
        if extra.get("_trim"):
            tangents = [None if tg is None else tg[:, :n] for tg in tangents]
    tangents = [None if tg is None else tg.movedim(a, (0, 1)) for tg, a in zip(tangents, axes)]
    R = reach_rows(tangents, n, n)[1:]
    A = [R[0]] + [None] * (L - 1)
    need = needs_injection(R)
    layers = find_layers(model, L) if need else None
    if need and layers is None:
        notes.append("layer modules not found: ambiguous kinds inferred from R")
    elif need:
        B = len(need) * n
        try:
            got = inject(lambda: run_stack(model, base.expand(B, n, dim).contiguous(), ids1.expand(B, n).contiguous(),
                                           mode, extra), [(layers[l - 1], 0, n) for l in need], n)
            for l, a in zip(need, got):
                A[l - 1] = a
        except Unmeasurable as e:
            notes.append(f"per-layer injection failed ({e}): ambiguous kinds inferred from R")
    res = {"R": R, "A": A, "layers": L}
    if n == N:
        try:
            res["R_packed"] = packed_reach(model, x, t, ids1, mode, extra, axes, notes)
        except Exception as e:  # noqa: BLE001 - recorded, and counted as not measurable with documents
            res["packed_unmeasurable"] = short(e)
    return res


def varlen_reads_across():
    """What a tiny eager Llama's last position reads with the flash-attention varlen arguments of
    DataCollatorWithFlattening (cu_seq_lens_q/k, max_length_q/k) for the documents DOCS: (reads
    across them with the varlen arguments alone, reads across them with the collator's position
    ids beside them). No eager or SDPA mask builder reads the varlen arguments (docs/MODELS.md)."""
    import torch
    from transformers import DataCollatorWithFlattening, LlamaConfig, LlamaModel

    torch.manual_seed(seed_of("varlen"))
    batch = DataCollatorWithFlattening(return_flash_attn_kwargs=True)([{"input_ids": [5] * d} for d in DOCS])
    varlen = {k: batch[k] for k in ("cu_seq_lens_q", "cu_seq_lens_k", "max_length_q", "max_length_k")}
    conf = LlamaConfig(hidden_size=HIDDEN, num_attention_heads=HEADS, num_key_value_heads=KV_HEADS,
                       intermediate_size=INTER, num_hidden_layers=2, vocab_size=VOCAB)
    model = LlamaModel._from_config(conf, attn_implementation="eager").to(torch.float64).eval()

    def across(**kw):
        x = torch.randn(1, N, HIDDEN, dtype=torch.float64, requires_grad=True)
        out = model(inputs_embeds=x, use_cache=False, **kw).last_hidden_state
        (out[0, -1] * torch.randn(HIDDEN, dtype=torch.float64)).sum().backward()
        return bool(x.grad[0, :DOCS[0]].ne(0).any())

    return across(**varlen), across(position_ids=batch["position_ids"], **varlen)


def packed_positions(B):
    """Position ids of the packed documents DOCS: 0..19, then 0..35 (what DataCollatorWithFlattening gives)."""
    import torch

    return torch.cat([torch.arange(d) for d in DOCS]).unsqueeze(0).expand(B, N).contiguous()


def packed_reach(model, x, t, ids1, mode, extra, axes, notes):
    """R(l) with the same inputs and tangents, given the packed documents DOCS as position ids (no
    2-D attention_mask, no cache): what the model does with a packed training batch. A forward that
    takes no position ids cannot be told about the documents: its reach is the unpacked one."""
    import torch
    import torch.autograd.forward_ad as fwAD

    params = inspect.signature(model.forward).parameters
    if "position_ids" not in params and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        notes.append("the forward takes no position_ids: packed documents cannot be given")
        return None
    n = x.shape[1]
    with torch.no_grad(), fwAD.dual_level():
        out = run_stack(model, fwAD.make_dual(x, t), ids1.expand(n, n).contiguous(), mode,
                        dict(extra, position_ids=packed_positions))
        tangents = [fwAD.unpack_dual(h).tangent for h in hidden_states_of(out)]
    tangents = [None if tg is None else tg.movedim(a, (0, 1)) for tg, a in zip(tangents, axes)]
    return reach_rows(tangents, n, n)[1:]


class Unmeasurable(Exception):
    pass


def is_encoder_decoder(conf):
    return bool(getattr(conf, "is_encoder_decoder", False))


def prepare(t, workdir):
    """Shrinks, saves and reloads the config of type t; returns (saved dict, reloaded config, notes)."""
    from transformers import AutoConfig

    cfg, note = shrunk_config(t)
    notes = [note] if note else []
    cfg.save_pretrained(workdir)
    text = (Path(workdir) / "config.json").read_text()
    loaded = AutoConfig.from_pretrained(workdir)
    return json.loads(text), loaded, notes


def small_chunks(model, notes):
    """Chunked linear-attention kernels written in Python (`chunk_*(..., chunk_size=64)`) loop over
    the rows of a chunk; a chunk of 16 computes the same function (the chunking is exact) faster."""
    import sys

    done = []
    for mod in {sys.modules.get(type(m).__module__) for m in model.modules()}:
        if mod is None or not mod.__name__.startswith("transformers.models."):
            continue
        for name, fn in list(vars(mod).items()):
            while inspect.isfunction(fn) and fn.__defaults__ is None and getattr(fn, "__wrapped__", None) is not None:
                fn = fn.__wrapped__  # kernel-hub wrappers keep the defaults on the wrapped function
            if not inspect.isfunction(fn) or "chunk" not in name or fn.__defaults__ is None:
                continue
            params = [p for p in inspect.signature(fn).parameters.values()
                      if p.default is not inspect.Parameter.empty and p.kind == p.POSITIONAL_OR_KEYWORD]
            names = [p.name for p in params]
            if "chunk_size" not in names or len(params) != len(fn.__defaults__):
                continue
            i = names.index("chunk_size")
            if isinstance(fn.__defaults__[i], int) and fn.__defaults__[i] > 16:
                fn.__defaults__ = fn.__defaults__[:i] + (16,) + fn.__defaults__[i + 1:]
                done.append(name)
    if done:
        notes.append(f"{done[0]} run with chunk_size 16 (exact; faster)")


def batch_invariant_indexers(model, notes):
    """Data-dependent key selectors ("...Indexer" modules) that return indices or masks are run on
    one batch row and broadcast: every row of the measuring batch has the same primal input, and
    the selection carries no derivative. (Some loop over queries in Python; the full batch would
    be slow.)"""
    import torch
    import torch.autograd.forward_ad as fwAD

    wrapped = []
    for name, mod in model.named_modules():
        if not type(mod).__name__.endswith("Indexer"):
            continue
        orig = mod.forward

        def fwd(*args, _orig=orig, **kwargs):
            B = None
            for a in list(args) + list(kwargs.values()):
                if isinstance(a, torch.Tensor) and a.dim() >= 2:
                    B = a.shape[0]
                    break
            if B is None or B == 1:
                return _orig(*args, **kwargs)

            def one(a):
                if isinstance(a, torch.Tensor) and a.dim() >= 1 and a.shape[0] == B:
                    return fwAD.unpack_dual(a).primal[:1]
                if isinstance(a, tuple):
                    return tuple(one(x) for x in a)
                return a

            out = _orig(*[one(a) for a in args], **{k: one(v) for k, v in kwargs.items()})

            def back(o):
                if isinstance(o, torch.Tensor) and o.dim() >= 1 and o.shape[0] == 1:
                    if o.dtype.is_floating_point:
                        raise TypeError("float output")
                    return o.expand(B, *o.shape[1:])
                if isinstance(o, tuple):
                    return tuple(back(x) for x in o)
                return o

            try:
                return back(out)
            except TypeError:
                return _orig(*args, **kwargs)

        mod.forward = fwd
        wrapped.append(type(mod).__name__)
    if wrapped:
        notes.append(f"{wrapped[0]} run on one batch row (selection is the same for every row)")


def measure_type(t, workdir, cache=None):
    """The measured per-layer reach of type t's text tower: a dict with "R" and "A" (per layer, the
    (q, k) boolean matrices), "layers", "notes", "config" (the saved config.json), or raises
    Unmeasurable (or anything else) when the type cannot be built or measured. With `cache` (a
    directory), a result keyed by the Transformers version, the type and the saved config is reused."""
    import torch
    import transformers

    # float64 everywhere: models that build masks with torch.full(finfo(dtype).min) in the default
    # dtype, or mix explicit float32 buffers with float64 activations, then agree
    torch.set_default_dtype(torch.float64)
    torch.manual_seed(seed_of(t))
    if "skip" in OVERRIDES.get(t, {}):
        return {"unmeasurable": OVERRIDES[t]["skip"], "notes": [], "config": None}
    saved, loaded, notes = prepare(t, workdir)
    key = None
    if cache:
        blob = json.dumps([transformers.__version__, MEASURE_VERSION, SEED, t, saved], sort_keys=True)
        key = Path(cache) / f"{t}-{hashlib.sha256(blob.encode()).hexdigest()[:16]}.json"
        if key.exists():
            res = json.loads(key.read_text())
            res["cached"] = True
            return res
    torch.manual_seed(seed_of(t))
    ov = OVERRIDES.get(t, {})
    if "patch" in ov:
        notes.append(ov["patch"]())
    try:
        if "measure" in ov:
            res = ov["measure"](loaded, notes)
        else:
            conf = text_config_of(loaded)
            if is_encoder_decoder(conf):
                res = measure_encoder_decoder_type(conf, notes, ov)
            else:
                model = build_model(conf)
                model.to(torch.float64).eval()
                redraw(model, notes)
                batch_invariant_indexers(model, notes)
                small_chunks(model, notes)
                if "post" in ov:
                    notes.append(ov["post"](model))
                extra = dict(ov.get("extra", {}), _trim=True) if ov.get("trim") else ov.get("extra", {})
                res = measure_decoder_only(model, conf, notes, extra)
    except Unmeasurable as e:
        res = {"unmeasurable": str(e)}
    res["notes"] = notes
    res["config"] = saved
    res = portable(res)
    if key is not None:
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_text(json.dumps(res))
    return res


def portable(res):
    """R and A as interval rows (JSON-friendly), plus the per-layer kinds; with documents, the
    packed reach too ("packed_reach", the unpacked one when the forward takes no position ids)."""
    if "R" not in res:
        return res
    R, A = res.pop("R"), res.pop("A")
    res["kinds"] = layer_kinds(R, A, res)
    res["reach"] = [[to_intervals(row) for row in Rl.tolist()] for Rl in R]
    if "R_packed" in res:
        P = res.pop("R_packed")
        res["packed_reach"] = res["reach"] if P is None else [[to_intervals(row) for row in Pl.tolist()] for Pl in P]
    return res


def encdec_call(model, ex, dx, extra):
    params = inspect.signature(model.forward).parameters
    kw = {k: (v(ex.shape[0]) if callable(v) else v) for k, v in extra.items() if not k.startswith("_")}
    p = params.get("input_ids")
    if p is not None and p.default is inspect.Parameter.empty:
        kw["input_ids"] = None  # required positionally, unused with inputs_embeds
    kw["output_hidden_states"] = True
    if "use_cache" in params:
        kw["use_cache"] = False
    if "return_dict" in params:
        kw["return_dict"] = True
    if "inputs_embeds" not in params or "decoder_inputs_embeds" not in params:
        raise Unmeasurable("the encoder-decoder takes no inputs_embeds / decoder_inputs_embeds")
    return model(inputs_embeds=ex, decoder_inputs_embeds=dx, **kw)


def measure_encoder_decoder(model, conf, notes, extra, n_enc=N, n_dec=N, call=None, enc_dim=None, dec_dim=None,
                            encoder=None, decoder=None):
    """R(l), A(l) on the combined sequence (encoder positions 0..n_enc-1, then the decoder's)."""
    import torch
    import torch.autograd.forward_ad as fwAD

    call = call or encdec_call
    gen = torch.Generator().manual_seed(seed_of(conf.model_type))
    if enc_dim is None:
        _, enc_dim = input_embedding_dim(model, conf)
    if dec_dim is None:
        try:
            _, dec_dim = input_embedding_dim(model.get_decoder(), conf)
        except Exception:
            dec_dim = enc_dim
    ex1 = torch.randn(1, n_enc, enc_dim, generator=gen, dtype=torch.float64)
    dx1 = torch.randn(1, n_dec, dec_dim, generator=gen, dtype=torch.float64)
    with torch.no_grad():
        out = call(model, ex1, dx1, extra)
    ehs, dhs = getattr(out, "encoder_hidden_states", None), getattr(out, "decoder_hidden_states", None)
    if ehs is None or dhs is None:
        raise Unmeasurable("the model returns no encoder/decoder hidden states")
    ehs, dhs = [_first_tensor(h) for h in ehs], [_first_tensor(h) for h in dhs]
    for h, s in [(h, n_enc) for h in ehs] + [(h, n_dec) for h in dhs]:
        if not (isinstance(h, torch.Tensor) and h.dim() == 3 and h.shape[:2] == (1, s)):
            raise Unmeasurable(f"hidden state shape {tuple(h.shape)} is not (batch, {s}, d)")
    Le, Ld = len(ehs) - 1, len(dhs) - 1
    m = n_enc + n_dec
    ex = ex1.expand(m, n_enc, enc_dim).contiguous()
    dx = dx1.expand(m, n_dec, dec_dim).contiguous()
    et = torch.zeros(m, n_enc, enc_dim, dtype=torch.float64)
    dt = torch.zeros(m, n_dec, dec_dim, dtype=torch.float64)
    for k in range(n_enc):
        et[k, k] = torch.randn(enc_dim, generator=gen, dtype=torch.float64)
    for j in range(n_dec):
        dt[n_enc + j, j] = torch.randn(dec_dim, generator=gen, dtype=torch.float64)
    with torch.no_grad(), fwAD.dual_level():
        out = call(model, fwAD.make_dual(ex, et), fwAD.make_dual(dx, dt), extra)
        etg = [fwAD.unpack_dual(_first_tensor(h)).tangent for h in out.encoder_hidden_states]
        dtg = [fwAD.unpack_dual(_first_tensor(h)).tangent for h in out.decoder_hidden_states]
    enc_nz = [nonzero(tg, m, n_enc) for tg in etg]  # [row, q]
    dec_nz = [nonzero(tg, m, n_dec) for tg in dtg]
    total = m
    eye_dec = torch.zeros(n_dec, total, dtype=torch.bool)
    eye_dec[torch.arange(n_dec), n_enc + torch.arange(n_dec)] = True
    R = []
    for l in range(1, Le + 1):
        enc_rows = torch.zeros(n_enc, total, dtype=torch.bool)
        enc_rows[:, :n_enc] = enc_nz[l][:n_enc, :].t()
        R.append(torch.cat([enc_rows, eye_dec]))
    last_enc = R[Le - 1][:n_enc] if Le else torch.zeros(n_enc, total, dtype=torch.bool)
    for l in range(1, Ld + 1):
        dec_rows = torch.zeros(n_dec, total, dtype=torch.bool)
        dec_rows[:, :n_enc] = dec_nz[l][:n_enc, :].t()
        dec_rows[:, n_enc:] = dec_nz[l][n_enc:, :].t()
        R.append(torch.cat([last_enc, dec_rows]))
    # one-layer adjacencies: layer 1 of each stack is read off R; later ones inferred or injected
    A = [None] * (Le + Ld)
    if Le:
        A[0] = R[0]
    if Ld:
        a = torch.zeros(total, total, dtype=torch.bool)
        a[:n_enc, :n_enc] = torch.eye(n_enc, dtype=torch.bool)
        a[n_enc:] = R[Le][n_enc:]
        A[Le] = a
    need = [l for l in needs_injection([r[:n_enc, :n_enc] for r in R[:Le]])]
    need += [Le + l for l in needs_injection([r[n_enc:, n_enc:] for r in R[Le:]])]
    if need:
        try:
            enc_layers = find_layers(encoder or model.get_encoder(), Le)
            dec_layers = find_layers(decoder or model.get_decoder(), Ld)
        except Exception:
            enc_layers = dec_layers = None
        if enc_layers is None or dec_layers is None:
            notes.append("layer modules not found: ambiguous kinds inferred from R")
        else:
            entries = [(enc_layers[l - 1], 0, n_enc) if l <= Le else (dec_layers[l - Le - 1], n_enc, n_dec) for l in need]
            B = len(need) * m
            try:
                got = inject(lambda: call(model, ex1.expand(B, n_enc, enc_dim).contiguous(),
                                          dx1.expand(B, n_dec, dec_dim).contiguous(), extra), entries, m)
                for l, g in zip(need, got):
                    a = torch.zeros(total, total, dtype=torch.bool)
                    if l <= Le:
                        a[:n_enc, :n_enc] = g
                        a[n_enc:, n_enc:] = torch.eye(n_dec, dtype=torch.bool)
                    else:
                        a[:n_enc, :n_enc] = torch.eye(n_enc, dtype=torch.bool)
                        a[n_enc:, n_enc:] = g
                        a[n_enc:, :n_enc] = R[l - 1][n_enc:, :n_enc]
                    A[l - 1] = a
            except Unmeasurable as e:
                notes.append(f"per-layer injection failed ({e}): ambiguous kinds inferred from R")
    return {"R": R, "A": A, "layers": Le + Ld, "encoder_layers": Le, "decoder_layers": Ld,
            "n_enc": n_enc, "n_dec": n_dec}


def measure_encoder_decoder_type(conf, notes, ov):
    import torch

    model = build_model(conf)
    model.to(torch.float64).eval()
    redraw(model, notes)
    if "post" in ov:
        notes.append(ov["post"](model))
    return measure_encoder_decoder(model, conf, notes, ov.get("extra", {}))


# ---------------------------------------------------------------------------------------------
# Reading a layer kind from an adjacency
# ---------------------------------------------------------------------------------------------

def _candidates(n):
    """(name, mask) for the layer kinds hasseflow knows, simplest first; mask[q, k]."""
    import torch

    q = torch.arange(n).unsqueeze(1)
    k = torch.arange(n).unsqueeze(0)
    causal = k <= q
    out = [("none", q == k), ("causal full", causal), ("bidir full", torch.ones(n, n, dtype=torch.bool))]
    for w in range(2, n):
        out.append((f"causal band {w}", causal & (q - k < w)))
    for w in range(2, n):
        out.append((f"bidir band {w}", (q - k).abs() < w))
    for c in range(2, n):
        out.append((f"causal chunk {c}", causal & (q // c == k // c)))
    for c in range(2, n):
        out.append((f"bidir chunk {c}", q // c == k // c))
    return out


_CAND = {}


def classify(M):
    """The kind string of a one-layer adjacency M[q][k] (a bool tensor), or a description."""
    import torch

    n = M.shape[0]
    if n not in _CAND:
        _CAND[n] = _candidates(n)
    for name, mask in _CAND[n]:
        if torch.equal(M, mask):
            return name
    # an asymmetric band q - a <= k <= q + b
    rows = [to_intervals(r) for r in M.tolist()]
    if all(len(r) == 1 for r in rows):
        a = {q - r[0][0] for q, r in enumerate(rows) if r[0][0] > 0}
        b = {r[0][1] - q for q, r in enumerate(rows) if r[0][1] < n - 1}
        if len(a) == 1 and len(b) == 1:
            a, b = a.pop(), b.pop()
            q = torch.arange(n).unsqueeze(1)
            k = torch.arange(n).unsqueeze(0)
            if torch.equal(M, (k >= q - a) & (k <= q + b)):
                return f"band -{a}..+{b}"
    causal = bool((M & ~torch.ones(n, n, dtype=torch.bool).tril()).sum() == 0)
    cells = int(M.sum())
    sample = "; ".join(f"row {q}: {rows[q]}" for q in (0, n // 2 - 1, n // 2, n - 1))
    return f"other ({'causal' if causal else 'bidir'}, {cells} cells; {sample})"


def infer(P, R):
    """(kind, determined): a kind A with R == A o P (boolean product); determined when exactly one
    of the candidate kinds fits (else the first that fits, or "other")."""
    import torch

    n = P.shape[0]
    if n not in _CAND:
        _CAND[n] = _candidates(n)
    Pf = P.double()
    hits = []
    for name, mask in _CAND[n]:
        if torch.equal((mask.double() @ Pf) > 0, R):
            hits.append(name)
            if len(hits) > 1:
                break
    if not hits:
        return "other", False
    return hits[0], len(hits) == 1


def _inferred(P, R):
    name, unique = infer(P, R)
    return f"{name} (inferred)" if unique else f"undetermined ({name} fits R)"


def layer_kinds(R, A, res):
    """Per layer, the kind of its one-layer adjacency (measured, or inferred from R(l-1) -> R(l))."""
    kinds = []
    ne = res.get("n_enc")
    for l in range(len(R)):
        a = A[l]
        if ne is None:
            kinds.append(classify(a) if a is not None else _inferred(R[l - 1], R[l]))
            continue
        Le = res["encoder_layers"]
        if l < Le:
            kinds.append("encoder " + (classify(a[:ne, :ne]) if a is not None
                                       else _inferred(R[l - 1][:ne, :ne], R[l][:ne, :ne])))
        else:
            cross = R[l][ne:, :ne]
            cross_s = "cross full" if bool(cross.all()) else ("no cross" if not bool(cross.any()) else f"cross other ({int(cross.sum())} cells)")
            own = classify(a[ne:, ne:]) if a is not None else _inferred(R[l - 1][ne:, ne:], R[l][ne:, ne:])
            kinds.append(f"decoder {own}, {cross_s}")
    return kinds


STRUCTURE_FIELDS = ("layer_types", "sliding_window", "attention_chunk_size", "local_attention", "attention_window",
                    "window_size", "sliding_window_pattern", "use_sliding_window", "max_window_layers",
                    "full_attention_interval", "no_rope_layers", "global_attn_every_n_layers", "attn_layer_period",
                    "attn_layer_offset", "attn_layer_indices", "hybrid_override_pattern", "layers_block_type",
                    "conv_L_cache", "index_topk", "use_bidirectional_attention", "is_decoder", "causal")


def fields_set(t, saved):
    """The structural fields of the saved (text) config and what the override table set for t."""
    ov = OVERRIDES.get(t, {})
    td = text_dict(saved)
    out = {"override": {k: v for k, v in ov.items() if k in ("text", "top", "layers", "ctor", "note")}}
    out["structure"] = {k: td[k] for k in STRUCTURE_FIELDS if k in td}
    lk = layer_count_field(td)
    if lk:
        out["structure"][lk] = td[lk]
    return out
