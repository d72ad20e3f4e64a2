#!/usr/bin/env python3
"""Figures for `hasseflow.measure` at real length on CPU (docs/BENCHMARKS.md, "measure at real
length"), each case in its own process so that its peak memory (ru_maxrss) is its own:

    ~/.cache/hasseflow/venv/bin/python python/bench_measure.py [N [CASE ...]]   (N = 32768 by default)

1. a tiny Mistral (sliding window 512, flex_attention) verified at n = N: auto columns, every layer;
2. a tiny Llama 4 text model (chunk 2048, flex_attention) at n = N;
3. a packed batch of 64 documents at n = N (tiny Llama, flex_attention, position ids): every ordered
   pair of documents tested by the bit-coded groups, on the sound model and on the same model with its
   position ids dropped (a leak: the groups find it and the bisection names it);
4. beside each, the obvious alternative in the same run: the former measurement needs one copy of
   the sequence per position (n forward passes, here this run's time per forward times n), and its
   n x n batch does not fit at all.
Each line gives the wall time (flex_attention's one-time compile included and shown apart), the
probes, the forward calls and the peak resident memory.
"""

import json
import resource
import subprocess
import sys
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 32768
CASES = [a for a in sys.argv[2:]] or ["mistral", "llama4", "packed", "packed-leak"]

CASE = r"""
import json, resource, sys, time, warnings
warnings.filterwarnings("ignore")
import torch, transformers as tf, hasseflow
tf.logging.set_verbosity_error()
torch.manual_seed(0)
case, n = sys.argv[1], int(sys.argv[2])
small = dict(vocab_size=256, hidden_size=32, intermediate_size=64, num_attention_heads=4, num_key_value_heads=2,
             max_position_embeddings=n, attn_implementation="flex_attention")
docs, wrap = None, None
if case == "mistral":
    model = tf.MistralModel(tf.MistralConfig(num_hidden_layers=2, sliding_window=512, **small))
elif case == "llama4":
    model = tf.Llama4TextModel(tf.Llama4TextConfig(num_hidden_layers=4, attention_chunk_size=2048, head_dim=8,
                                                   intermediate_size_mlp=64, num_local_experts=2,
                                                   no_rope_layers=[1, 1, 1, 0], **small))
else:
    model = tf.LlamaModel(tf.LlamaConfig(num_hidden_layers=2, **small))
    docs = [n // 64] * 64
model.eval()
# One forward first: flex_attention's compile (once per process), timed apart.
x = torch.randn(1, n, 32)
kw = {"position_ids": torch.cat([torch.arange(d) for d in docs]).unsqueeze(0)} if docs else {}
t = time.perf_counter()
with torch.no_grad():
    model(inputs_embeds=x, **kw)
compile_s = time.perf_counter() - t
t = time.perf_counter()
with torch.no_grad():
    model(inputs_embeds=x, **kw)
forward_s = time.perf_counter() - t
if case == "packed-leak":
    class DropsPositions(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner, self.config = inner, inner.config
        def get_input_embeddings(self):
            return self.inner.get_input_embeddings()
        def forward(self, inputs_embeds=None, position_ids=None, output_hidden_states=None, use_cache=None,
                    return_dict=None):
            return self.inner(inputs_embeds=inputs_embeds, output_hidden_states=output_hidden_states,
                              use_cache=use_cache)
    model = DropsPositions(model)
t = time.perf_counter()
m = hasseflow.measure(model, n, docs, mode="difference")
wall = time.perf_counter() - t
print(json.dumps({"case": case, "n": n, "wall_s": round(wall, 1), "compile_s": round(compile_s - forward_s, 1),
                  "forward_s": round(forward_s, 2), "agrees": m.agrees, "leaks": m.leaks,
                  "first_leak": m.first_leak, "passes": m.passes, "columns": len(m.columns),
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
                  "summary": m._summary()}))
"""


def main():
    print(f"measure at n = {N} on {__import__('os').cpu_count()} cores (flex_attention, difference mode)")
    for case in CASES:
        t = time.perf_counter()
        r = subprocess.run([sys.executable, "-c", CASE, case, str(N)], capture_output=True, text=True)
        total = time.perf_counter() - t
        if r.returncode:
            print(f"{case}: failed: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}")
            continue
        d = json.loads(r.stdout.strip().splitlines()[-1])
        p = d["passes"]
        print(f"{case:12} measure {d['wall_s']:6.1f} s  (process {total:5.1f} s, flex compile {d['compile_s']:.1f} s)"
              f"  probes {p['probes']:3} (columns {p['columns']}, groups {p['groups']}, bisection steps "
              f"{p['bisection']}), forwards {p['forwards']:3}  peak {d['peak_mib']} MiB  "
              f"agrees {d['agrees']}  first leak {d['first_leak']}")
        per = d["wall_s"] / max(p["forwards"], 1)
        print(f"{'':12} n copies instead: {N} forwards x {per:.2f} s (this run's time per forward) = "
              f"{N * per / 3600:.1f} h, and an n x n batch")
    print(f"bench process peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB")


if __name__ == "__main__":
    main()
