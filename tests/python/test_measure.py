#!/usr/bin/env python3
"""hasseflow.measure on the model as it runs: real bugs reproduced, sound models measured clean,
probes against the full measurement, bad input, a real SIGINT, and `python -m hasseflow measure`.

Each bug below is a way packed or windowed training goes wrong in practice; measure must find it and
name the first leaking (layer, q, k):
  1. packed position ids plus a 2-D attention_mask (Transformers then ignores the packing);
  2. a hybrid whose linear-attention state crosses packed documents (predicted by model());
  3. a custom attention whose window is off by one;
  4. a config whose sliding window is silently off (use_sliding_window=False);
  5. a custom attention registered through AttentionInterface that ignores the mask;
  6. BERT given packed position ids;
  7. a leak only in an SDPA path (a mask built from the wrong lengths): difference mode finds it,
     exact mode on eager attention is clean.
Ends with "N passed, M failed" (scripts/test.sh reads it).
"""

import os
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
import transformers as tf
from transformers import AttentionInterface

import hasseflow
from hasseflow import HasseflowError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tally import Tally  # noqa: E402
import live_models  # noqa: E402  (its redraw of decays)

warnings.filterwarnings("ignore")
tf.logging.set_verbosity_error()
T = Tally()
SMALL = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_attention_heads=4, num_key_value_heads=2)


def llama(layers=2, attn="eager"):
    torch.manual_seed(0)
    return tf.LlamaModel(tf.LlamaConfig(num_hidden_layers=layers, attn_implementation=attn, **SMALL))


def check_leak(m, what, layer=None, cross=None, docs=None):
    """m found a leak whose (layer, q, k) is a real measured cell outside the prediction or across
    documents."""
    ok = m.leaks and m.first_leak is not None
    if ok and layer is not None:
        ok = m.first_leak[0] == layer
    if ok and docs:
        d = np.repeat(np.arange(len(docs)), docs)
        _, q, k = m.first_leak
        ok = d[q] != d[k] if cross else ok
    T.check(ok, f"{what}: leak found, first at {m.first_leak} ({m})")


# --- the bugs -----------------------------------------------------------------------------------------

def bug_attention_mask_overrides_packing():
    n, docs = 48, [20, 28]
    model = llama()
    clean = hasseflow.measure(model, n, docs)
    T.check(clean.agrees and not clean.leaks, f"bug 1 control: packed position ids alone are honoured ({clean})")
    m = hasseflow.measure(model, n, docs, attention_mask=torch.ones(1, n, dtype=torch.long))
    check_leak(m, "bug 1: position ids plus a 2-D attention_mask", layer=1, cross=True, docs=docs)
    T.check(m.first_leak == (1, 20, 0), f"bug 1: the first leak is layer 1, q = 20 (doc 2's first), k = 0 "
            f"({m.first_leak})")


def qwen3_next(layer_types):
    torch.manual_seed(1)
    conf = tf.Qwen3NextConfig(num_hidden_layers=len(layer_types), head_dim=8, linear_num_value_heads=2,
                              linear_num_key_heads=2, linear_key_head_dim=8, linear_value_head_dim=8, num_experts=4,
                              num_experts_per_tok=2, moe_intermediate_size=16, shared_expert_intermediate_size=16,
                              layer_types=layer_types, attn_implementation="eager", **SMALL)
    return tf.Qwen3NextModel(conf)


def bug_hybrid_state_crosses_documents():
    n, docs = 24, [10, 14]
    model = qwen3_next(["linear_attention", "full_attention"])
    # Random decays can underflow to exactly zero over a few steps (missing cells that are no bug):
    # re-drawn small, as tests/python/live_models.py does.
    live_models.redraw(model, [])
    pred = hasseflow.model(model.config, n, docs)
    m = hasseflow.measure(model, n, docs)
    T.check(pred.leaks, "bug 2: model() predicts that the linear-attention state crosses documents")
    T.check(m.agrees, f"bug 2: the measured hybrid equals model()'s prediction ({m}; {m.notes})")
    check_leak(m, "bug 2: the hybrid's state crosses documents", layer=1, cross=True, docs=docs)


def every_head(query, key, value):
    """Grouped key/value heads repeated to the query's heads."""
    groups = query.shape[1] // key.shape[1]
    return key.repeat_interleave(groups, 1), value.repeat_interleave(groups, 1)


def window_off_by_one(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kw):
    """A local attention written by hand: `q - k <= window` where the config means `q - k < window`."""
    n = query.shape[2]
    w = module.config.sliding_window
    i = torch.arange(n)
    allowed = (i[:, None] >= i[None, :]) & (i[:, None] - i[None, :] <= w)
    key, value = every_head(query, key, value)
    scores = (query @ key.transpose(-1, -2)) * scaling
    scores = scores.masked_fill(~allowed, float("-inf"))
    return (scores.softmax(-1) @ value).transpose(1, 2).contiguous(), None


def ignores_mask(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kw):
    """Eager attention that drops the mask it is given."""
    key, value = every_head(query, key, value)
    scores = (query @ key.transpose(-1, -2)) * scaling
    return (scores.softmax(-1) @ value).transpose(1, 2).contiguous(), None


def packed_sdpa_wrong_lengths(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kw):
    """A packed SDPA path that builds its own document mask from cu_seq_lens_q, one position off:
    the first position of each later document is counted in the document before it."""
    n = query.shape[2]
    cu = kw["cu_seq_lens_q"].long()
    ends = cu[1:-1] + 1
    doc = torch.bucketize(torch.arange(n), ends, right=True)
    i = torch.arange(n)
    allowed = (doc[:, None] == doc[None, :]) & (i[:, None] >= i[None, :])
    key, value = every_head(query, key, value)
    out = F.scaled_dot_product_attention(query, key, value, attn_mask=allowed, scale=scaling)
    return out.transpose(1, 2).contiguous(), None


def rounds_by_batch(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kw):
    """Causal attention whose rounding depends on the batch size, as kernels that pick another
    routine for one row than for several do (a few units in the last place, at every output)."""
    i = torch.arange(query.shape[2])
    key, value = every_head(query, key, value)
    scores = (query @ key.transpose(-1, -2)) * scaling
    out = scores.masked_fill(i[:, None] < i[None, :], float("-inf")).softmax(-1) @ value
    if query.shape[0] > 1:
        out = out * (1 + 2 * torch.finfo(out.dtype).eps)
    return out.transpose(1, 2).contiguous(), None


AttentionInterface.register("hf_test_window_off_by_one", window_off_by_one)
AttentionInterface.register("hf_test_rounds_by_batch", rounds_by_batch)
AttentionInterface.register("hf_test_ignores_mask", ignores_mask)
AttentionInterface.register("hf_test_packed_sdpa", packed_sdpa_wrong_lengths)


def bug_custom_window_off_by_one():
    torch.manual_seed(0)
    model = tf.MistralModel(tf.MistralConfig(num_hidden_layers=2, sliding_window=4, **SMALL))
    model.set_attn_implementation("hf_test_window_off_by_one")
    m = hasseflow.measure(model, 24)
    check_leak(m, "bug 3: a custom window off by one", layer=1)
    T.check(m.first_leak == (1, 4, 0) and m.passes["mode"] == "exact",
            f"bug 3: first leak (1, 4, 0): q reads 5 keys back, in exact mode ({m.first_leak}, {m.passes['mode']})")
    T.check(any("layer 1 reads 5 keys back" in x and "says 4" in x for x in m.notes),
            f"bug 3: the report states the measured window per layer ({m.notes})")


def bug_window_silently_off():
    torch.manual_seed(0)
    conf = tf.Qwen3Config(num_hidden_layers=2, sliding_window=4, use_sliding_window=False, head_dim=8,
                          attn_implementation="eager", **SMALL)
    model = tf.Qwen3Model(conf)
    want = lambda b, h, q, kv: (q >= kv) & (q - kv < 4)  # noqa: E731  (the window the user meant)
    m = hasseflow.measure(model, 24, expected=want)
    check_leak(m, "bug 4: a sliding window that is silently off", layer=1)
    T.check(m.first_leak == (1, 4, 0), f"bug 4: first leak (1, 4, 0) ({m.first_leak})")
    c = hasseflow.measure(model, 24)
    T.check(c.agrees, f"bug 4: the config reader sees the same (no window): measured equals the config ({c})")


def bug_registered_attention_ignores_mask():
    n, docs = 32, [12, 20]
    model = llama()
    model.set_attn_implementation("hf_test_ignores_mask")
    m = hasseflow.measure(model, n, docs)
    check_leak(m, "bug 5: a registered attention that ignores the mask", layer=1)
    T.check(m.first_leak == (1, 0, 1), f"bug 5: the first leak is q = 0 reading k = 1 ({m.first_leak})")
    T.check(model.config._attn_implementation == "hf_test_ignores_mask",
            "bug 5: measure leaves the registered implementation in place")


def bug_bert_packed_position_ids():
    torch.manual_seed(0)
    n, docs = 24, [10, 14]
    model = tf.BertModel(tf.BertConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_attention_heads=4,
                                       num_hidden_layers=2, attn_implementation="eager"))
    m = hasseflow.measure(model, n, docs)
    check_leak(m, "bug 6: BERT given packed position ids", layer=1, cross=True, docs=docs)
    T.check(m.first_leak == (1, 0, 10), f"bug 6: first leak (1, 0, 10) ({m.first_leak})")
    T.check(m.cross_document_cells == 2 * 10 * 14, f"bug 6: every cross-document cell is read "
            f"({m.cross_document_cells})")


def bug_leak_only_in_sdpa_path():
    n, docs = 32, [12, 20]
    model = llama(attn="eager")
    clean = hasseflow.measure(model, n, docs, packing="varlen", mode="exact")
    T.check(clean.agrees and not clean.leaks and clean.passes["mode"] == "exact",
            f"bug 7: exact mode on eager attention is clean ({clean})")
    model.set_attn_implementation("hf_test_packed_sdpa")
    try:
        hasseflow.measure(model, n, docs, packing="varlen", mode="exact")
        T.check(False, "bug 7: exact mode on an SDPA path is refused")
    except HasseflowError as e:
        T.check("mode='difference'" in str(e), f"bug 7: exact mode refuses and names difference mode ({e})")
    m = hasseflow.measure(model, n, docs, packing="varlen", mode="difference")
    check_leak(m, "bug 7: difference mode finds the SDPA path's leak", layer=1, cross=True, docs=docs)
    T.check(m.first_leak == (1, 12, 0) and m.passes["noise_floor"] == 0,
            f"bug 7: first leak (1, 12, 0), noise floor 0 ({m.first_leak}, {m.passes})")


def batch_rounding_is_no_flow():
    """Difference mode compares each batch of probes with an unperturbed pass of the same batch size:
    a kernel that rounds one row differently from several moves no output (it read as every cell
    moving, a full reach, on a CPU whose batched matmul rounds so)."""
    n = 24
    model = llama(attn="eager")
    model.set_attn_implementation("hf_test_rounds_by_batch")
    for batch in (1, 5, 24):
        m = hasseflow.measure(model, n, mode="difference", batch=batch)
        T.check(m.agrees and not m.leaks and m.passes["noise_floor"] == 0,
                f"difference mode at batch {batch}: a batch-size rounding is no flow ({m}; {m.notes})")


# --- sound models --------------------------------------------------------------------------------------

def sound_models():
    torch.manual_seed(0)
    n = 40
    cases = [
        ("decoder (Llama, SDPA)", llama(attn="sdpa"), None),
        ("sliding (Mistral, window 6, eager)",
         tf.MistralModel(tf.MistralConfig(num_hidden_layers=3, sliding_window=6, attn_implementation="eager",
                                          **SMALL)), None),
        ("chunked (Llama 4 text, chunk 8)",
         tf.Llama4TextModel(tf.Llama4TextConfig(num_hidden_layers=4, attention_chunk_size=8, head_dim=8,
                                                intermediate_size_mlp=64, num_local_experts=2,
                                                attn_implementation="eager", **SMALL)), None),
        ("hybrid (LFM2, convolutions)",
         tf.Lfm2Model(tf.Lfm2Config(num_hidden_layers=3, layer_types=["conv", "full_attention", "conv"], **SMALL)),
         [16, 24]),
        ("encoder (BERT)", tf.BertModel(tf.BertConfig(vocab_size=64, hidden_size=32, intermediate_size=64,
                                                      num_attention_heads=4, num_hidden_layers=2)), None),
    ]
    text = tf.Gemma3TextConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=3, num_attention_heads=2,
                               num_key_value_heads=1, head_dim=16, vocab_size=64, sliding_window=5,
                               layer_types=["sliding_attention", "full_attention", "sliding_attention"])
    vision = tf.SiglipVisionConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=1,
                                   image_size=16, patch_size=4)
    gemma = tf.Gemma3Model(tf.Gemma3Config(text_config=text.to_dict(), vision_config=vision.to_dict(),
                                           mm_tokens_per_image=4))
    for what, images in (("VLM text tower with an image span (Gemma 3)", [(12, 10)]), ("the same without", None)):
        m = hasseflow.measure(gemma, n, images=images)
        T.check(m.agrees and m.images == [list(x) for x in images or []],
                f"sound: {what} measured clean ({m}; {m.notes})")
    m = hasseflow.measure(gemma, n, images=[(12, 10)], expected=lambda b, h, q, kv: q >= kv)
    T.check(m.first_leak == (1, 12, 13), f"an image span read as causal: its bidirectional reads are the leak "
            f"({m.first_leak})")
    t5 = tf.T5Config(vocab_size=64, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4)
    cases.append(("encoder half (T5EncoderModel)", tf.T5EncoderModel(t5), None))
    cases.append(("decoder half (T5's decoder stack)", tf.T5ForConditionalGeneration(t5).get_decoder(), None))
    for what, model, docs in cases:
        try:
            m = hasseflow.measure(model, n, docs)
            T.check(m.agrees and (docs is None or m.passes["groups"] == 0),
                    f"sound: {what} measured clean ({m}; {m.notes})")
        except HasseflowError as e:
            T.check(False, f"sound: {what}: {e}")
    # the same models above the full limit: columns and group tests
    model = tf.MistralModel(tf.MistralConfig(num_hidden_layers=2, sliding_window=16, attn_implementation="sdpa",
                                             **SMALL))
    m = hasseflow.measure(model, 2048, [1000, 1048])
    T.check(m.agrees and not m.leaks and m.columns_measured == "some" and m.passes["groups"] == 2,
            f"sound: Mistral at n = 2048 with two documents, probes ({m})")


def probes_equal_full():
    """Probe mode (chosen columns, group tests) against every column, on clean and leaking models."""
    n, docs = 96, [30, 30, 36]
    for what, model in (("clean", llama()), ("leaking", llama())):
        if what == "leaking":
            model.set_attn_implementation("hf_test_ignores_mask")
        full = hasseflow.measure(model, n, docs)
        cols = [0, 17, 29, 30, 59, 60, 95]
        part = hasseflow.measure(model, n, docs, columns=cols)
        T.check(np.array_equal(part.column_reach, full.reach[:, :, cols].transpose(0, 2, 1)),
                f"probes: {what}: the chosen columns equal the full measurement's")
        T.check(part.leaks == full.leaks and part.passes["groups"] == 4,
                f"probes: {what}: group tests agree with the full measurement about leaks ({part.passes})")
        if what == "leaking":
            _, q, k = part.first_leak
            T.check(full.reach[part.first_leak[0] - 1, q, k] and not full.predicted[part.first_leak[0] - 1, q, k],
                    f"probes: the bisected leak {part.first_leak} is a real extra cell of the full measurement")
    # group tests alone find a leak that no chosen column sees (the last position is read by nobody
    # else in a causal model), and bisect it to one key of the first document
    model = llama()
    m = hasseflow.measure(model, 64, [16] * 4, columns=[63], attention_mask=torch.ones(1, 64, dtype=torch.long))
    T.check(m.leaks and m.passes["bisection"] > 0 and m.first_leak[:2] == (1, 16) and m.first_leak[2] < 16,
            f"probes: groups find and bisect a leak no column sees ({m.passes}, {m.first_leak})")


def expected_per_layer():
    """expected= as one mask per layer: a chunked model against its own per-layer masks, and against
    chunks in every layer (its last, full layer then reads across chunks)."""
    torch.manual_seed(0)
    model = tf.Llama4TextModel(tf.Llama4TextConfig(num_hidden_layers=4, attention_chunk_size=8, head_dim=8,
                                                   intermediate_size_mlp=64, num_local_experts=2,
                                                   no_rope_layers=[1, 1, 1, 0], attn_implementation="eager",
                                                   **SMALL))
    chunk = lambda b, h, q, kv: (q >= kv) & (q // 8 == kv // 8)  # noqa: E731
    causal = lambda b, h, q, kv: q >= kv  # noqa: E731
    m = hasseflow.measure(model, 32, expected=[chunk, chunk, chunk, causal])
    T.check(m.agrees, f"expected= per layer: the chunked model equals its four masks ({m})")
    m = hasseflow.measure(model, 32, expected=[chunk] * 4)
    T.check(m.first_leak == (4, 8, 0), f"expected= per layer: the full fourth layer is the leak ({m.first_leak})")
    try:
        hasseflow.measure(model, 32, expected=[chunk] * 3)
        T.check(False, "expected= with the wrong number of layers is refused")
    except HasseflowError as e:
        T.check("3 layers, the model 4" in str(e), f"expected= with the wrong number of layers is refused ({e})")


def packing_and_padding():
    """Documents as varlen kwargs and as a 4-D mask, and a padding mask, on eager (exact) and SDPA
    (difference): clean; an attention that ignores the mask reads the padding keys."""
    n, docs = 32, [12, 20]
    for attn in ("eager", "sdpa"):
        model = llama(attn=attn)
        for packing in ("varlen", "mask"):
            m = hasseflow.measure(model, n, docs, packing=packing)
            T.check(m.agrees and not m.leaks, f"packing={packing!r} on {attn}: measured clean ({m})")
        left = torch.ones(1, n, dtype=torch.long)
        left[0, :5] = 0
        m = hasseflow.measure(model, n, attention_mask=left)
        T.check(m.agrees and not m.leaks, f"left padding on {attn}: measured clean ({m})")
    torch.manual_seed(0)
    bert = tf.BertModel(tf.BertConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_attention_heads=4,
                                      num_hidden_layers=2))
    m = hasseflow.measure(bert, n, docs, packing="mask")
    T.check(m.agrees and not m.leaks, f"packing='mask' on BERT (which ignores packed position ids): the 4-D mask "
            f"keeps its documents apart, as predicted ({m})")
    model = llama()
    model.set_attn_implementation("hf_test_ignores_mask")
    m = hasseflow.measure(model, n, attention_mask=left)
    T.check(m.first_leak == (1, 5, 0) and m.json["per_layer"][0]["extra"] > 5 * 27,
            f"an attention that ignores the mask reads padding and future keys: first leak (1, 5, 0) ({m.first_leak})")
    model = llama()
    model.set_attn_implementation("hf_test_window_off_by_one")  # causal, so only the padding can leak
    model.config.sliding_window = n
    m = hasseflow.measure(model, n, attention_mask=left)
    T.check(m.first_leak == (1, 5, 0), f"padding keys read by the first real position: first leak (1, 5, 0) "
            f"({m.first_leak})")


# --- bad input ------------------------------------------------------------------------------------------

class NoHidden(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 8)
        self.lin = torch.nn.Linear(8, 8)

    def get_input_embeddings(self):
        return self.emb

    def forward(self, inputs_embeds=None, output_hidden_states=None):
        return {"last_hidden_state": self.lin(inputs_embeds)}


class Raises(NoHidden):
    def forward(self, inputs_embeds=None, output_hidden_states=None):
        raise RuntimeError("deliberate failure in forward")


def raises(fn, *needles):
    try:
        fn()
    except HasseflowError as e:
        return all(s in str(e) for s in needles) and "\n" not in str(e), str(e)
    except Exception as e:
        return False, f"{type(e).__name__}: {e}"
    return False, "no error"


def bad_input():
    model = llama()
    with torch.device("meta"):
        meta = tf.LlamaModel(tf.LlamaConfig(num_hidden_layers=1, **SMALL))
    cases = [
        ("no inputs_embeds", lambda: hasseflow.measure(torch.nn.Linear(2, 2), 4), "inputs_embeds"),
        ("no hidden states", lambda: hasseflow.measure(NoHidden(), 4), "hidden_states"),
        ("a forward that raises", lambda: hasseflow.measure(Raises(), 4), "RuntimeError", "deliberate failure"),
        ("documents not summing", lambda: hasseflow.measure(model, 8, [0, 8]), "documents[0] = 0"),
        ("documents summing wrong", lambda: hasseflow.measure(model, 8, [3, 4]), "sum to 7, but n = 8"),
        ("float document lengths", lambda: hasseflow.measure(model, 8, [3.5, 4.5]), "whole numbers"),
        ("weights on the meta device", lambda: hasseflow.measure(meta, 8), "meta device"),
        ("an unknown mode", lambda: hasseflow.measure(model, 8, mode="fast"), "mode = 'fast'"),
        ("a column outside n", lambda: hasseflow.measure(model, 8, columns=[9]), "column 9"),
        ("an image outside n", lambda: hasseflow.measure(model, 8, images=[(6, 4)]), "image 0"),
        ("a bad attention_mask shape", lambda: hasseflow.measure(model, 8, attention_mask=torch.ones(2, 8)),
         "attention_mask has shape"),
        ("n not an integer", lambda: hasseflow.measure(model, 8.5), "not an integer"),
    ]
    for what, fn, *needles in cases:
        ok, msg = raises(fn, *needles)
        T.check(ok, f"bad input: {what} -> one-line HasseflowError ({msg[:140]})")
    m = hasseflow.measure(model, np.int64(8))
    T.check(m.n == 8 and m.agrees, "measure takes numpy integers for n")
    torch.manual_seed(0)
    short = tf.LlamaModel(tf.LlamaConfig(num_hidden_layers=1, max_position_embeddings=16, **SMALL))
    m = hasseflow.measure(short, 24)
    T.check(any("max_position_embeddings = 16" in x for x in m.notes),
            f"n above max_position_embeddings is measured with a note ({m.notes})")
    model.train()
    hasseflow.measure(model, 8)
    T.check(model.training, "measure restores the model's training mode")


SIGINT_CHILD = r"""
import signal, sys, time, torch, hasseflow, transformers as tf
# a shell's background job starts with SIGINT ignored; a terminal or Jupyter kernel has Python's handler
signal.signal(signal.SIGINT, signal.default_int_handler)
torch.manual_seed(0)
m = tf.LlamaModel(tf.LlamaConfig(num_hidden_layers=2, vocab_size=64, hidden_size=32, intermediate_size=64,
                                 num_attention_heads=4, num_key_value_heads=2, attn_implementation="eager"))
m.train()
print("ready", flush=True)
try:
    hasseflow.measure(m, 512, batch=1)
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", m.training, flush=True)
"""


def sigint_stops_between_passes():
    """A real SIGINT during a 512-pass run: KeyboardInterrupt between passes, the model restored."""
    p = subprocess.Popen([sys.executable, "-c", SIGINT_CHILD], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True)
    first = p.stdout.readline()
    time.sleep(3.0)
    t0 = time.time()
    p.send_signal(signal.SIGINT)
    line = p.stdout.readline()
    dt = time.time() - t0
    p.wait(timeout=60)
    T.check(first.strip() == "ready" and line.strip() == "interrupted True" and dt < 1.0,
            f"SIGINT stops a 512-pass run within 1 s and restores the model ({line.strip()!r}, {dt:.2f} s)")


def command_line():
    d = tempfile.mkdtemp()
    conf = tf.MistralConfig(num_hidden_layers=2, sliding_window=6, **SMALL)
    conf.save_pretrained(d)
    run = [sys.executable, "-m", "hasseflow", "measure", os.path.join(d, "config.json"), "--context", "48",
           "--docs", "20,28"]
    r = subprocess.run(run, capture_output=True, text=True, timeout=300)
    T.check(r.returncode == 0 and "equals its config" in r.stdout and "no leak found" in r.stdout,
            f"python -m hasseflow measure CONFIG prints the report ({r.stdout[:200]!r} {r.stderr[-200:]!r})")
    r = subprocess.run(run[:-2] + ["--json", "--attn", "hf_test_none"], capture_output=True, text=True, timeout=300)
    T.check(r.returncode == 2 and r.stderr.startswith("hasseflow: ") and r.stderr.count("\n") == 1,
            f"an unknown --attn is one line on stderr, exit 2 ({r.stderr[:200]!r})")
    model = tf.MistralModel(conf)
    model.save_pretrained(d)
    r = subprocess.run([sys.executable, "-m", "hasseflow", "measure", d, "--context", "24", "--json"],
                       capture_output=True, text=True, timeout=300)
    import json

    ok = r.returncode == 0 and json.loads(r.stdout)["agrees"] is True
    T.check(ok, f"python -m hasseflow measure CHECKPOINT --json reads a from_pretrained directory ({r.stderr[-200:]})")


def main():
    for part in (bug_attention_mask_overrides_packing, bug_hybrid_state_crosses_documents,
                 bug_custom_window_off_by_one, bug_window_silently_off, bug_registered_attention_ignores_mask,
                 bug_bert_packed_position_ids, bug_leak_only_in_sdpa_path, batch_rounding_is_no_flow, sound_models, probes_equal_full, expected_per_layer, packing_and_padding,
                 bad_input, sigint_stops_between_passes, command_line):
        t = time.time()
        try:
            part()
        except Exception as e:  # a crash in one part is a failure, never a skip
            T.check(False, f"{part.__name__}: {type(e).__name__}: {e}")
        print(f"{part.__name__}: {time.time() - t:.1f} s", file=sys.stderr)
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
