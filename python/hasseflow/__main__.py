"""`python -m hasseflow measure CONFIG_OR_CHECKPOINT --context N ...`: builds the model (random
weights from a config.json, or a local `from_pretrained` directory with its weights) and prints
`hasseflow.measure`'s report, for people who do not write notebooks."""

import argparse
import json
import os
import sys

from ._native import HasseflowError

# Width fields that --tiny shrinks (the layer pattern, windows, chunks and layer count stay).
TINY = {"hidden_size": 64, "intermediate_size": 128, "intermediate_size_mlp": 128, "moe_intermediate_size": 32,
        "shared_expert_intermediate_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
        "vocab_size": 256, "num_local_experts": 2, "num_experts": 4, "num_experts_per_tok": 2, "d_model": 64,
        "d_ff": 128, "d_kv": 16, "num_heads": 4, "n_embd": 64, "n_head": 4}


def _ints(text, what):
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise HasseflowError(f"--{what}: {text!r} is not a comma-separated list of integers") from None


def _spans(text):
    out = []
    for part in text.split(","):
        if not part.strip():
            continue
        try:
            s, length = part.split(":")
            out.append((int(s), int(length)))
        except ValueError:
            raise HasseflowError(f"--images: {part!r} is not START:LEN") from None
    return out


def build(source, attn=None, dtype=None, tiny=False, layers=None):
    """The model of a config.json (random weights) or of a checkpoint directory (its weights)."""
    import torch
    import transformers

    path = os.fspath(source)
    if not os.path.exists(path):
        raise HasseflowError(f"{path}: no such file or directory (give a config.json or a checkpoint directory)")
    folder = path if os.path.isdir(path) else os.path.dirname(path) or "."
    weights = os.path.isdir(path) and any(
        f.endswith((".safetensors", ".bin")) for f in os.listdir(path))
    kw = {}
    if attn:
        kw["attn_implementation"] = attn
    torch_dtype = None
    if dtype:
        torch_dtype = getattr(torch, dtype, None)
        if not isinstance(torch_dtype, torch.dtype):
            raise HasseflowError(f"--dtype {dtype!r} is not a torch dtype (float32, bfloat16, float64, ...)")
    try:
        if os.path.isdir(path):
            config = transformers.AutoConfig.from_pretrained(folder)
        else:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
            if not isinstance(data, dict) or "model_type" not in data:
                raise HasseflowError(f"{path}: a config.json needs a model_type")
            config = transformers.AutoConfig.for_model(**data)
    except HasseflowError:
        raise
    except Exception as e:
        raise HasseflowError(f"{path}: not a Transformers config ({type(e).__name__}: {str(e).splitlines()[0][:200]})")
    if tiny or layers:
        if weights:
            raise HasseflowError("--tiny and --layers change the architecture; they apply to a config, not to a "
                                 "checkpoint with weights")
        _shrink(config, tiny, layers)
    try:
        if weights:
            model = transformers.AutoModel.from_pretrained(folder, dtype=torch_dtype or "auto", **kw)
        else:
            model = transformers.AutoModel.from_config(config, **kw)
            if torch_dtype is not None:
                model = model.to(torch_dtype)
    except Exception as e:
        raise HasseflowError(f"{path}: Transformers could not build the model ({type(e).__name__}: "
                             f"{str(e).splitlines()[0][:200] if str(e) else ''})") from None
    return model


def _shrink(config, tiny, layers):
    subs = [config] + [getattr(config, k) for k in ("text_config", "decoder", "encoder")
                       if hasattr(getattr(config, k, None), "to_dict")]
    for c in subs:
        if tiny:
            for k, v in TINY.items():
                if isinstance(getattr(c, k, None), int):
                    setattr(c, k, v)
        if layers:
            for k in ("num_hidden_layers", "num_layers", "n_layer", "n_layers"):
                if isinstance(getattr(c, k, None), int):
                    setattr(c, k, layers)
            lt = getattr(c, "layer_types", None)
            if isinstance(lt, list) and len(lt) > layers:
                c.layer_types = lt[:layers]


def report_text(m):
    lines = [m._title(), m._summary(), f"what this proves: {m.json['proves']}"]
    cols = ["layer", "measured", "predicted", "missing", "extra", "cross_document", "group_extra", "back",
            "predicted_back"]
    rows = m.json["per_layer"]
    cols = [c for c in cols if any(c in r for r in rows)]
    lines.append("  ".join(f"{c:>14}" for c in cols))
    for r in rows:
        lines.append("  ".join(f"{r.get(c, ''):>14}" for c in cols))
    lines += [f"note: {x}" for x in m.json["notes"]]
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m hasseflow", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure", help="measure a model's per-layer reach against its config")
    m.add_argument("source", help="a config.json (random weights) or a local checkpoint directory")
    m.add_argument("--context", type=int, required=True, help="positions to measure at (n)")
    m.add_argument("--docs", help="packed document lengths, comma-separated, summing to the context")
    m.add_argument("--images", help="image spans START:LEN,... (token_type_ids 1; read each other both ways)")
    m.add_argument("--columns", help="positions whose column of every R(l) to measure exactly")
    m.add_argument("--attn", help="attn_implementation to build the model with (eager, sdpa, flex_attention, ...)")
    m.add_argument("--mode", default="auto", choices=("auto", "exact", "difference"))
    m.add_argument("--packing", default="position_ids", choices=("position_ids", "varlen", "mask"))
    m.add_argument("--dtype", help="torch dtype of the model (default: the checkpoint's, float32 from a config)")
    m.add_argument("--tiny", action="store_true", help="shrink the widths of a config (layer pattern kept)")
    m.add_argument("--layers", type=int, help="keep this many layers of a config")
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--json", action="store_true", help="print the report as JSON")
    args = p.parse_args(argv)
    import hasseflow

    try:
        model = build(args.source, args.attn, args.dtype, args.tiny, args.layers)
        res = hasseflow.measure(model, args.context, _ints(args.docs, "docs") if args.docs else None,
                                images=_spans(args.images) if args.images else None,
                                columns=_ints(args.columns, "columns") if args.columns else None,
                                mode=args.mode, packing=args.packing, seed=args.seed)
    except HasseflowError as e:
        print(f"hasseflow: {e}", file=sys.stderr)
        return 2
    print(res.to_json() if args.json else report_text(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
