#!/usr/bin/env python3
"""The Python package (python/hasseflow, the PyO3 module crates/py) against the CLI and torch.

Runs with the project venv, where scripts/setup.sh installs the package (`maturin develop`), and
the built `hasseflow` binary (first argument, else $HASSEFLOW_BIN, else target/debug/hasseflow).

1. Every input kind gives the CLI's JSON for the same input: a mask_mod callable (dense, on the
   structured engine above n = 8192, with layers=, at another head), a BlockMask, a torch tensor, a
   NumPy array, create_mask's 4-D output, a per-layer stack, hasseflow JSON (path, text, dict), a
   text grid, .npy; a config as a PretrainedConfig, a model, a path, a dict and a gallery name;
   a derivation.
2. A mask_mod the text reader refuses (a closure over a torch.repeat_interleave lookup) is analysed
   through the callable route, and equals the same mask computed in NumPy.
3. The BlockMask route equals the dense route on 50 random masks (documents, windows, prefixes,
   blocks of 16..128, lengths not a multiple of the block), densely and on the structured engine.
4. model() equals `hasseflow model NAME --context 131072 --json` on every gallery model.
5. measure() on tiny Transformers models (a causal decoder, a sliding-window decoder, an encoder, a
   hybrid with linear layers) equals `hasseflow model` on their configs, with and without packed
   documents; a model whose packing is broken on purpose reports exactly the cross-document cells.
6. Bad input raises HasseflowError with the core's message, never crashes the interpreter: a
   mask_mod that raises, a wrong dtype or shape, n = 0, a config without layers, a Rust panic, and
   300 mutated inputs to every reader.
7. Pictures and links: the notebook HTML has the Hasse diagram and growth plot, app links decode.

Prints one line per failure and ends with "N passed, M failed"; exits non-zero on any failure.
"""

import base64
import json
import os
import random
import subprocess
import sys
import tempfile
import warnings

import numpy as np

os.environ["RUST_BACKTRACE"] = "0"  # the deliberate panic prints one line, not a backtrace
import torch
from torch.nn.attention.flex_attention import create_block_mask, create_mask

import hasseflow
from hasseflow import HasseflowError
from tally import Tally
import live_models  # noqa: E402  (its redraw of decays)

BIN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("HASSEFLOW_BIN", "target/debug/hasseflow")
T = Tally()
TMP = tempfile.mkdtemp(prefix="hasseflow-package-")
warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", category=UserWarning)


def cli(*args):
    out = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"hasseflow {' '.join(map(str, args))}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def write(name, text):
    path = os.path.join(TMP, name)
    mode = "wb" if isinstance(text, bytes) else "w"
    with open(path, mode) as f:
        f.write(text)
    return path


def rows_mask(rows):
    return np.array([[c == "1" for c in r] for r in rows], dtype=bool)


def same_dense(r, want, what):
    """A dense Analysis against `analyze --json`: every field, the limit as an array."""
    want = dict(want)
    limit = rows_mask(want.pop("limit"))
    got = dict(r.json)
    stack_limit = None
    if "stack" in want:
        want["stack"] = dict(want["stack"])
        stack_limit = want["stack"].pop("limit")
    ok = got == want and r.limit is not None and np.array_equal(r.limit, limit)
    ok = ok and r.L_star == want["depth"] and r.growth == want["growth"]
    if not ok:
        diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
        print(f"  {what}: fields differ: {diff}")
    T.check(ok, f"{what}: equals `hasseflow analyze --json`")
    return stack_limit


def same_structured(r, want, what):
    want = {k: v for k, v in want.items() if k not in ("timings_ms", "mask_mod")}
    got = {k: v for k, v in r.json.items() if k != "mask_mod"}
    T.check(got == want and r.L_star == want["depth"], f"{what}: equals `hasseflow analyze --json` (structured)")


# 1. Every input kind against the CLI ------------------------------------------------------------

WINDOW = "def window(b, h, q_idx, kv_idx):\n    return (q_idx >= kv_idx) & (q_idx - kv_idx < 5)\n"


def window(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx < 5)


def inputs_against_cli():
    src = write("window.py", WINDOW)
    want = cli("analyze", src, "--n", 40, "--json")
    same_dense(hasseflow.analyze(window, n=40), want, "mask_mod callable n=40")
    same_dense(hasseflow.analyze(src, n=40), want, "mask_mod source path")
    same_structured(hasseflow.analyze(window, n=20000), cli("analyze", src, "--n", 20000, "--json"),
                    "mask_mod callable n=20000")
    same_structured(hasseflow.analyze(window, n=40, layers=3), cli("analyze", src, "--n", 40, "--layers", 3, "--json"),
                    "mask_mod callable layers=3")
    heads = "def per_head(b, h, q_idx, kv_idx):\n    return (q_idx >= kv_idx) & (q_idx - kv_idx <= 2 * h + 1)\n"
    hsrc = write("heads.py", heads)

    def per_head(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx <= 2 * h + 1)

    same_dense(hasseflow.analyze(per_head, n=30, h=2), cli("analyze", hsrc, "--n", 30, "--head", 2, "--json"),
               "mask_mod callable at h=2")
    bm = create_block_mask(window, None, None, 40, 40, device="cpu", BLOCK_SIZE=16)
    same_dense(hasseflow.analyze(bm), want, "BlockMask")
    dense = create_mask(window, 1, 1, 40, 40, device="cpu")
    npy = write("window.npy", b"")
    np.save(npy, dense[0, 0].numpy())
    want_npy = cli("analyze", npy, "--json")
    same_dense(hasseflow.analyze(dense), want_npy, "create_mask 4-D tensor")
    same_dense(hasseflow.analyze(dense[0, 0]), want_npy, "torch bool tensor")
    same_dense(hasseflow.analyze(dense[0, 0].numpy().astype(np.float32)), want_npy, "NumPy float 0/1 array")
    same_dense(hasseflow.analyze(npy), want_npy, ".npy path")
    grid = write("grid.txt", "\n".join("".join("1" if c else "." for c in row) for row in dense[0, 0].numpy()))
    same_dense(hasseflow.analyze(grid), cli("analyze", grid, "--json"), "text grid path")
    # A stack: three different layers.
    rng = np.random.default_rng(1)
    layers = [np.tril(rng.random((24, 24)) < p) for p in (0.2, 0.4, 0.1)]
    r = hasseflow.analyze(layers)
    with open(os.path.join(TMP, "stack.json"), "wb") as f:
        f.write(hasseflow._inputs.stack_file(layers))
    want_stack = cli("analyze", os.path.join(TMP, "stack.json"), "--json")
    stack_limit = same_dense(r, want_stack, "per-layer stack (list)")
    T.check(r.stack["depth"] == want_stack["stack"]["depth"] and stack_limit is not None, "stack: depth as the CLI")
    same_dense(hasseflow.analyze(np.stack(layers)), want_stack, "per-layer stack ((L, n, n) array)")
    # hasseflow JSON: a preset file with labels, as a path, text and dict.
    preset = subprocess.run([BIN, "preset", "sliding-window", "--n", "12", "w=3"], capture_output=True, text=True,
                            check=True).stdout
    doc = json.loads(preset)
    doc["labels"] = [f"t{i}" for i in range(12)]
    path = write("preset.json", json.dumps(doc))
    want_json = cli("analyze", path, "--json")
    same_dense(hasseflow.analyze(path), want_json, "hasseflow JSON path")
    same_dense(hasseflow.analyze(json.dumps(doc)), want_json, "hasseflow JSON text")
    same_dense(hasseflow.analyze(doc), want_json, "hasseflow JSON dict")
    # Configs: every way to give one, against `hasseflow model --json`.
    import transformers as tf

    conf = tf.MistralConfig(num_hidden_layers=4, sliding_window=64, hidden_size=32, intermediate_size=64,
                            num_attention_heads=4, num_key_value_heads=2, vocab_size=64)
    cdir = os.path.join(TMP, "mistral")
    conf.save_pretrained(cdir)
    cpath = os.path.join(cdir, "config.json")
    want = cli("model", cpath, "--context", 4096, "--docs", "1024,3072", "--row", 4000, "--json")
    strip = lambda j: {k: v for k, v in j.items() if k not in ("timings_ms", "source", "name")}
    for what, src in [("config.json path", cpath), ("PretrainedConfig", conf), ("a model", tf.MistralModel(conf)),
                      ("dict", json.loads(open(cpath).read())), ("config directory", cdir)]:
        got = hasseflow.model(src, context=4096, documents=[1024, 3072], rows=[4000])
        T.check(strip(got.json) == strip(want) and got.L_star == want["full_at"], f"model(): {what} equals the CLI")
    # Issue 29: BERT's masks never look at packed position ids, so the real model reads across the
    # documents; model() says so (and equals the CLI), where it used to keep them apart.
    bert = tf.BertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64)
    bdir = os.path.join(TMP, "bert")
    bert.save_pretrained(bdir)
    got = hasseflow.model(bert, 128, [50, 78], rows=[127])
    T.check(got.leaks is True and got.packing == "ignored" and got.rows["127"][0] == [[0, 127]]
            and got.notes[-1] == "bert does not detect packed documents given as position ids: every layer reads "
                                 "across them", f"model(BertConfig, 128, [50, 78]) reads across the documents: {got.notes}")
    want = cli("model", os.path.join(bdir, "config.json"), "--context", 128, "--docs", "50,78", "--row", 127, "--json")
    T.check(strip(got.json) == strip(want), "model(): BERT with documents equals the CLI")
    llama = hasseflow.model(tf.LlamaConfig(num_hidden_layers=2), 128, [50, 78], rows=[127])
    T.check(llama.leaks is False and llama.packing == "detected" and llama.rows["127"][0] == [[50, 127]],
            "model(LlamaConfig, 128, [50, 78]) keeps the documents apart")
    got = hasseflow.model("t5-base", context=512, encoder_context=256)
    T.check(strip(got.json) == strip(cli("model", "t5-base", "--context", 512, "--encoder-context", 256, "--json")),
            "model(): encoder_context as the CLI")
    # Derivations.
    want = cli("derive", "block", "--n", 8, "--block", 2, "--json", "--mask-out", os.path.join(TMP, "derived.json"))
    d = hasseflow.derive("block", n=8, block=2)
    T.check(d.json == want, "derive(): the report equals `hasseflow derive --json`")
    with open(os.path.join(TMP, "derived.json")) as f:
        cli_mask = json.load(f)
    T.check(np.array_equal(d.mask, rows_mask(cli_mask["rows"])), "derive(): the merged mask equals --mask-out")
    T.check(d.mask_file.get("provenance") == cli_mask.get("provenance"), "derive(): the provenance equals --mask-out")
    n = d.n
    cells = create_mask(d.mask_mod, 1, 1, n, n, device="cpu")[0, 0].numpy()
    T.check(np.array_equal(cells, d.mask), "derive(): .mask_mod under create_mask is the merged mask")
    bm = d.block_mask("cpu", block_size=4)
    T.check(np.array_equal(hasseflow.analyze(bm).mask, d.mask), "derive(): .block_mask(device) is the merged mask")
    mae = hasseflow.derive("mae", n=8, span=2)
    T.check(mae.json == cli("derive", "mae", "--n", 8, "--span", 2, "--json"), "derive(): mae equals the CLI")


# 2. A mask_mod the text reader refuses ----------------------------------------------------------

def refused_mask_mod():
    # Document ids from the token stream: data the source text does not hold, so the text reader
    # cannot evaluate it; the live closure can.
    tokens = torch.tensor([7, 3, 9, 0, 5, 8, 0, 2, 2, 6, 1, 0, 4, 4, 4, 0, 9, 9, 1, 3, 0, 6, 6, 6])
    doc_of = torch.cumsum(tokens == 0, 0) - (tokens == 0).long()

    def packed(b, h, q_idx, kv_idx):
        return (doc_of[q_idx] == doc_of[kv_idx]) & (q_idx >= kv_idx)

    src = write("packed.py", "import torch\nfrom batch import tokens  # the data loader's current batch\n"
                "EOS = 0\ndoc_of = torch.cumsum(tokens == EOS, 0) - (tokens == EOS).long()\n\n"
                "def packed(b, h, q_idx, kv_idx):\n    return (doc_of[q_idx] == doc_of[kv_idx]) & (q_idx >= kv_idx)\n")
    refused = subprocess.run([BIN, "analyze", src, "--n", "24", "--json"], capture_output=True, text=True)
    T.check(refused.returncode != 0 and "batch" in refused.stderr,
            f"the text reader refuses the closure over the batch's tokens ({refused.stderr.strip()[:120]})")
    r = hasseflow.analyze(packed, n=24)
    d = np.cumsum(tokens.numpy() == 0) - (tokens.numpy() == 0)
    truth = (d[:, None] == d[None, :]) & (np.arange(24)[:, None] >= np.arange(24)[None, :])
    T.check(np.array_equal(r.mask, truth) and len(set(d)) == 6, "the callable route evaluates it as NumPy does")
    npy = write("packed.npy", b"")
    np.save(npy, truth)
    same_dense(r, cli("analyze", npy, "--json"), "the refused mask_mod via the callable route")


# 3. BlockMask route == dense route on 50 random masks -----------------------------------------

def random_mask_mod(rng, n):
    kind = rng.choice(["doc", "window", "prefix", "doc_window", "chunk", "bidir_doc"])
    cuts = sorted(rng.sample(range(1, n), rng.randint(1, 5)))
    lens = [b - a for a, b in zip([0] + cuts, cuts + [n])]
    doc = torch.repeat_interleave(torch.arange(len(lens)), torch.tensor(lens))
    w, p, c = rng.randint(1, 40), rng.randint(0, n // 2), rng.randint(2, 50)
    mods = {
        "doc": lambda b, h, q, kv: (doc[q] == doc[kv]) & (q >= kv),
        "window": lambda b, h, q, kv: (q >= kv) & (q - kv < w),
        "prefix": lambda b, h, q, kv: (kv < p) | (q >= kv),
        "doc_window": lambda b, h, q, kv: (doc[q] == doc[kv]) & (q >= kv) & (q - kv < w),
        "chunk": lambda b, h, q, kv: (q // c == kv // c) & (q >= kv),
        "bidir_doc": lambda b, h, q, kv: doc[q] == doc[kv],
    }
    return kind, mods[kind]


def block_mask_equals_dense():
    rng = random.Random(7)
    for i in range(50):
        n = rng.randint(20, 420)
        bs = rng.choice([16, 32, 64, 128])
        kind, mod = random_mask_mod(rng, n)
        bm = create_block_mask(mod, None, None, n, n, device="cpu", BLOCK_SIZE=bs)
        dense = create_mask(mod, 1, 1, n, n, device="cpu")[0, 0]
        a, b = hasseflow.analyze(bm), hasseflow.analyze(dense)
        ok = (np.array_equal(a.mask, b.mask) and a.json == b.json and np.array_equal(a.limit, b.limit))
        # The structured engine on the BlockMask's own rows, as deep as the dense L*.
        s = hasseflow.analyze(bm, layers=max(1, b.L_star))
        k = min(len(s.growth), len(b.growth))
        ok = ok and s.engine == "structured" and s.full_at == b.L_star and s.growth[:k] == b.growth[:k]
        ok = ok and s.limit_cells == b.limit.cells == int(np.asarray(b.limit).sum())
        T.check(ok, f"random BlockMask {i} ({kind}, n={n}, block {bs}): equals the dense route")


# 4. model() == `hasseflow model` on every gallery model at 131072 -----------------------------

def gallery_models():
    names = [g["name"] for g in hasseflow.gallery()]
    T.check(names == [g["name"] for g in cli("model", "--list", "--json")] and len(names) >= 50,
            f"gallery(): the CLI's list ({len(names)} models)")
    for name in names:
        want = cli("model", name, "--context", 131072, "--json")
        got = hasseflow.model(name, context=131072)
        want.pop("timings_ms")
        got_json = {k: v for k, v in got.json.items() if k != "timings_ms"}
        T.check(got_json == want and got.L_star == want["full_at"], f"model({name!r}, context=131072) equals the CLI")


# 5. measure() on tiny Transformers models -----------------------------------------------------

def tiny_models():
    import transformers as tf

    torch.manual_seed(0)
    small = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_attention_heads=4, num_key_value_heads=2)
    yield "causal decoder (Llama)", tf.LlamaModel(tf.LlamaConfig(num_hidden_layers=3, **small))
    yield "sliding-window decoder (Mistral, window 4)", tf.MistralModel(
        tf.MistralConfig(num_hidden_layers=3, sliding_window=4, **small))
    yield "encoder (BERT)", tf.BertModel(tf.BertConfig(vocab_size=64, hidden_size=32, intermediate_size=64,
                                                       num_attention_heads=4, num_hidden_layers=2))
    conf = tf.Lfm2Config(vocab_size=64, hidden_size=32, intermediate_size=64, num_attention_heads=4,
                         num_key_value_heads=2, num_hidden_layers=4, layer_types=["conv", "full_attention", "conv",
                                                                                   "conv"])
    yield "hybrid with convolution layers (LFM2)", tf.Lfm2Model(conf)
    conf = tf.Qwen3NextConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_attention_heads=4,
                              num_key_value_heads=2, num_hidden_layers=4, head_dim=8, linear_num_value_heads=2,
                              linear_num_key_heads=2, linear_key_head_dim=8, linear_value_head_dim=8, num_experts=4,
                              num_experts_per_tok=2, moe_intermediate_size=16, shared_expert_intermediate_size=16,
                              layer_types=["linear_attention", "linear_attention", "full_attention",
                                           "linear_attention"])
    model = tf.Qwen3NextModel(conf)
    # measure runs the model as it is: eager attention and experts (SDPA on CPU and grouped_mm have no
    # forward-mode rule, and a grouped matmul's rounding depends on the routing), its decays re-drawn
    # small (random ones underflow to exactly zero within a few steps)
    model.set_experts_implementation("eager")
    model.set_attn_implementation("eager")
    live_models.redraw(model, [])
    yield "hybrid with linear attention (Qwen3-Next)", model


class BrokenPacking(torch.nn.Module):
    """A decoder that drops the position ids: packed documents then see each other."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.config = inner.config

    def get_input_embeddings(self):
        return self.inner.get_input_embeddings()

    def forward(self, inputs_embeds=None, position_ids=None, output_hidden_states=None, use_cache=None,
                return_dict=None):
        return self.inner(inputs_embeds=inputs_embeds, output_hidden_states=output_hidden_states, use_cache=use_cache)


def measure_models():
    n, docs = 24, [10, 14]
    for what, model in tiny_models():
        try:
            m = hasseflow.measure(model, n=n)
            want = cli_reach(model.config, n, None)
            T.check(m.agrees and np.array_equal(m.predicted, want) and np.array_equal(m.reach, want),
                    f"measure(): {what} equals `hasseflow model` on its config ({m})")
        except Exception as e:
            T.check(False, f"measure(): {what}: {type(e).__name__}: {e}")
    import transformers as tf

    llama = tf.LlamaModel(tf.LlamaConfig(num_hidden_layers=2, vocab_size=64, hidden_size=32, intermediate_size=64,
                                         num_attention_heads=4, num_key_value_heads=2))
    m = hasseflow.measure(llama, n=n, documents=docs)
    want = cli_reach(llama.config, n, docs)
    T.check(m.agrees and np.array_equal(m.reach, want) and m.cross_document_cells == 0 and not m.leaks,
            "measure(): packed documents through position ids equal `hasseflow model --docs` (no leak)")
    broken = hasseflow.measure(BrokenPacking(llama), n=n, documents=docs)
    d = np.repeat(np.arange(2), docs)
    causal = np.tril(np.ones((n, n), dtype=bool))
    cross = int((causal & (d[:, None] != d[None, :])).sum())
    T.check(not broken.agrees and broken.leaks and broken.cross_document_cells == cross
            and all(r["extra"] == cross == r["cross_document"] for r in broken.json["per_layer"]),
            f"measure(): broken packing reports its {cross} cross-document cells")
    T.check(len(broken.differing_cells()) == cross and "<svg" in broken._repr_html_(),
            "measure(): the differing cells are listed and drawn")
    # A mask that the model does not follow: measured against a sliding window it never applies.
    m = hasseflow.measure(llama, n=n, expected=lambda b, h, q, kv: (q >= kv) & (q - kv < 3))
    T.check(not m.agrees and m.json["per_layer"][0]["extra"] > 0 and m.json["per_layer"][0]["missing"] == 0,
            "measure(expected=mask_mod): a model that reads more than the mask says is caught")


def cli_reach(config, n, docs):
    path = os.path.join(TMP, "measured-config")
    config.save_pretrained(path)
    args = ["model", os.path.join(path, "config.json"), "--context", n, "--json"]
    if docs:
        args += ["--docs", ",".join(map(str, docs))]
    for q in range(n):
        args += ["--row", q]
    j = cli(*args)
    out = np.zeros((j["layers"], n, n), dtype=bool)
    for q, per_layer in j["rows"].items():
        for l, spans in enumerate(per_layer):
            for lo, hi in spans:
                out[l, int(q), lo:hi + 1] = True
    return out


# 6. Bad input --------------------------------------------------------------------------------

def raises(fn, *needles):
    try:
        fn()
    except HasseflowError as e:
        return all(s in str(e) for s in needles), str(e)
    except Exception as e:
        return False, f"{type(e).__name__}: {e}"
    return False, "no error"


def bad_input():
    def boom(b, h, q, kv):
        raise RuntimeError("deliberate")

    cases = [
        ("a mask_mod that raises", lambda: hasseflow.analyze(boom, n=8), "mask_mod raised", "deliberate"),
        ("a float mask with 0.5", lambda: hasseflow.analyze(np.full((4, 4), 0.5)), "0.5"),
        ("a string array", lambda: hasseflow.analyze(np.array([["a"]])), "dtype"),
        ("a 3 x 4 mask", lambda: hasseflow.analyze(np.zeros((3, 4), dtype=bool)), "not square"),
        ("n = 0", lambda: hasseflow.analyze(window, n=0), "n = 0"),
        ("an empty mask", lambda: hasseflow.analyze(np.zeros((0, 0), dtype=bool)), "n = 0"),
        ("a mask_mod without n", lambda: hasseflow.analyze(window), "needs n"),
        ("a config without layers", lambda: hasseflow.model({"model_type": "llama", "num_hidden_layers": 0}, context=64),
         "num_hidden_layers: must be a positive integer"),
        ("an unknown gallery name", lambda: hasseflow.model("no-such-model", context=64), "no-such-model"),
        ("a context of 0", lambda: hasseflow.model("gpt2", context=0), "at least 1"),
        ("documents not summing", lambda: hasseflow.model("gpt2", context=64, documents=[10, 10]), "sum to 20"),
        ("an image span that is not a pair", lambda: hasseflow.model("gemma-3-27b-it", 64, images=[(1, 2, 3)]),
         "images: entry 0", "(start, length)"),
        ("images as a string", lambda: hasseflow.model("gemma-3-27b-it", 64, images="1:2"), "images: give a list"),
        ("a negative image start", lambda: hasseflow.model("gemma-3-27b-it", 64, images=[(-1, 2)]), "images: entry 0"),
        ("an image span past the context", lambda: hasseflow.model("gemma-3-27b-it", 64, images=[(60, 8)]),
         "images: span 60:8 ends at 68, past the context 64"),
        ("overlapping image spans", lambda: hasseflow.model("gemma-3-27b-it", 64, images=[(2, 8), (6, 4)]),
         "images: spans 2:8 and 6:4 overlap"),
        ("image spans on an encoder-decoder", lambda: hasseflow.model("t5-base", 64, images=[(2, 4)]),
         "images: image spans are not modelled for an encoder-decoder"),
        ("a malformed JSON file", lambda: hasseflow.analyze('{"format": "hasseflow-mask", "version": 1,'), "JSON"),
        ("an unknown family option", lambda: hasseflow.derive("block", n=8, block=2, colour=3), "colour"),
        ("a ragged stack", lambda: hasseflow.analyze([np.eye(3), np.eye(4)]), "stack layer 1"),
        ("a context over the memory limit", lambda: hasseflow.model("llama-4-scout-17b-16e", context=4_000_000_000),
         "context 4000000000", "GiB"),
        ("a callable at n = 10**9", lambda: hasseflow.analyze(window, n=10 ** 9), "structured engine's limit"),
        ("a 10000 x 10000 dense mask", lambda: hasseflow.analyze(np.zeros((10000, 10000), dtype=bool)),
         "out of range 1..=8192"),
        ("a panic in Rust", lambda: hasseflow._native._panic_for_test(), "internal error", "deliberate panic"),
        ("measure at n = 0", lambda: hasseflow.measure(torch.nn.Linear(2, 2), n=0), "n = 0"),
        ("measure a module without inputs_embeds", lambda: hasseflow.measure(torch.nn.Linear(2, 2), n=4),
         "inputs_embeds"),
        ("wrong-length row words", lambda: hasseflow._native.analyze_words(b"\x00" * 7, 3), "expected 24"),
        ("bits past the last column", lambda: hasseflow._native.analyze_words(b"\xff" * 24, 3), "past column 2"),
        ("a BlockMask with n= that differs", lambda: hasseflow.analyze(
            create_block_mask(window, None, None, 32, 32, device="cpu", BLOCK_SIZE=16), n=40), "32 positions"),
    ]
    for what, fn, *needles in cases:
        ok, msg = raises(fn, *needles)
        T.check(ok and "\n" not in msg, f"bad input: {what} -> one-line HasseflowError ({msg[:120]})")


def fuzz():
    """300 mutations of valid inputs into every reader: only HasseflowError, never a crash."""
    rng = random.Random(11)
    seeds = {
        "file": [open(os.path.join(TMP, "preset.json"), "rb").read(), WINDOW.encode(), b"1..\n11.\n111\n"],
        "config": [json.dumps({"model_type": "mistral", "num_hidden_layers": 4, "sliding_window": 8}).encode(),
                   json.dumps({"model_type": "gemma3_text", "num_hidden_layers": 6, "sliding_window": 4}).encode()],
        "family": [json.dumps({"family": "block", "n": 6, "block": 2}).encode()],
    }
    bad = 0
    for i in range(300):
        kind = rng.choice(sorted(seeds))
        data = bytearray(rng.choice(seeds[kind]))
        for _ in range(rng.randint(1, 6)):
            op = rng.random()
            pos = rng.randrange(len(data) + 1)
            if op < 0.4 and data:
                data[min(pos, len(data) - 1)] = rng.randrange(256)
            elif op < 0.7:
                data[pos:pos] = bytes(rng.choice([b"9", b"[", b"{", b"\"", b"-", b"99999999999", b"\xff"]))
            else:
                del data[pos:pos + rng.randint(1, 8)]
        try:
            if kind == "file":
                hasseflow._native.analyze_file(bytes(data), 16, 0, 0, None)
            elif kind == "config":
                hasseflow._native.model_run(64, bytes(data).decode("utf-8", "replace"))
            else:
                hasseflow._native.derive_family(bytes(data).decode("utf-8", "replace"), None, False)
        except HasseflowError as e:
            if "internal error" in str(e):
                bad += 1
                print(f"  fuzz {kind}: {e}")
        except Exception as e:
            bad += 1
            print(f"  fuzz {kind}: {type(e).__name__}: {e}")
    T.check(bad == 0, f"fuzz: 300 mutated inputs give results or HasseflowError ({bad} otherwise)")


# 7. Pictures and links -------------------------------------------------------------------------

def pictures_and_links():
    r = hasseflow.analyze(window, n=12)
    page = r._repr_html_()
    T.check(page.count("<svg") == 3 and "L* = " in page and r._repr_svg_().startswith("<svg"),
            "analysis HTML: the mask, R(l) and the growth plot (a window's order is one chain: a sentence)")
    link = r.app_link("http://127.0.0.1:8080/")
    frag = link.split("#", 1)[1]
    fields = dict(p.split("=", 1) for p in frag.split("&"))
    bits = base64.urlsafe_b64decode(fields["m"] + "=" * (-len(fields["m"]) % 4))
    cells = np.unpackbits(np.frombuffer(bits, np.uint8), bitorder="little")[:144].reshape(12, 12).astype(bool)
    T.check(link.startswith("http://127.0.0.1:8080/#") and fields["n"] == "12" and np.array_equal(cells, r.mask),
            "app_link(): the share link carries the mask")
    big = hasseflow.analyze(window, n=20000)
    T.check("<svg" in big._repr_html_() and "L* = not reached" in big._summary(), "structured analysis HTML draws")
    m = hasseflow.model("gemma-3-27b-it", context=32768)
    T.check(m._repr_html_().count("<svg") == 3 and "gemma3" in m._repr_html_(), "model HTML: R(1), R(l) and growth")
    d = hasseflow.derive("butterfly", n=4)
    T.check("#design=" in d.app_link("http://127.0.0.1:8080/") and d._repr_html_().count("<svg") == 4,
            "derive(): designer link and pictures (with the compressed Hasse diagram)")


def main():
    for part in (inputs_against_cli, refused_mask_mod, block_mask_equals_dense, gallery_models, measure_models,
                 bad_input, fuzz, pictures_and_links):
        try:
            part()
        except Exception as e:
            import traceback

            traceback.print_exc()
            T.check(False, f"{part.__name__}: {type(e).__name__}: {e}")
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
