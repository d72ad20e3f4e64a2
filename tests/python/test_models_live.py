#!/usr/bin/env python3
"""Oracle for `hasseflow model`: every text model type of the installed Transformers, built tiny
and measured live, against what hasseflow derives from the same config.json.

For each type (gen_model_types.text_types(): the language-model and text-task mappings, and every
config with a text tower, CLIP's, SigLIP's, ColPali's, ...) tests/python/live_models.py builds a
tiny model from the type's default config (shrunk; windows scaled so they bind at n = 56; hybrid
patterns set so each layer kind appears), saves the config with `save_pretrained`, and measures
the true per-layer reach of the text tower by forward-mode differentiation (R(l)[q, k]: the hidden
state at q after layer l has a nonzero derivative with respect to the input embedding at k). Then
it runs

    hasseflow model <dir>/config.json --context 56 --json --row 0 ... --row 55
    (encoder-decoders: --encoder-context 56 and rows 0..111, encoder positions first)

and compares every layer's rows cell by cell. Outcomes: equal, wrong (accepted but different),
refused (hasseflow exits non-zero), not measurable (with the reason).

Packed documents: every type that is not an encoder-decoder is measured a second time with the
documents 20 + 36 given as position ids restarting at 0 (no attention_mask, no cache) and compared
with `hasseflow model ... --docs 20,36`; the table lists the types that honour packing (documents
kept apart), those whose masks detect it while recurrent or convolution layers read across, and
those that ignore it. A type that keeps the documents apart must be reported `packing: detected`.
No saved window or chunk may be n or more (live_models.window_sizes shrinks each size to its own).

    test_models_live.py                      all types, 2 jobs, cold (no cache)
    test_models_live.py --only llama,t5      a few types
    test_models_live.py --jobs 4 --cache target/models_live_cache

Prints a table by family, the packed-documents table, the wrong / refused / not measurable types
with their messages, the totals and the wall time, then "N passed, M failed" (N: equal types; M:
wrong types with or without documents, windows left at n or more, plus the
refused ones when fewer than 95% of the measured types are equal, plus failed self-checks of the
measure, SANITY). Exit status 1 when M > 0. Writes target/models_live.json (per-type results:
outcome, message, hasseflow's per-layer types, the measured rows as interval lists, notes, the saved
config) and target/models_live_kinds.json (type -> per-layer kinds read from the measured one-layer
adjacencies, the structural fields of the saved config and what the override table set). Progress
goes to stderr. The binary: $HASSEFLOW_BIN, else target/debug/hasseflow (built with
`cargo build -p hasseflow-cli` when missing).
"""

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
import traceback
from multiprocessing.connection import wait
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import live_models as lm  # noqa: E402
from tally import Tally  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "target" / "models_live.json"
KINDS_OUT = ROOT / "target" / "models_live_kinds.json"
THRESHOLD = 0.95

# The measure itself, checked by hand once and kept as a guard: the per-layer kinds these types must
# show (R(1) is the one-layer adjacency of layer 1, so its kind pins R(1) exactly). Any other result
# means the harness, not hasseflow, is broken.
SANITY = {
    "llama": ["causal full"] * 2,
    "mistral": ["causal band 8"] * 2,
    "bert": ["bidir full"] * 2,
    "gemma3_text": ["causal band 8", "causal band 8", "causal full", "causal band 8"],
    "qwen3_next": ["causal full"] * 4,
    "mamba": ["causal full"] * 2,
    "lfm2": ["causal band 3", "causal band 3", "causal full", "causal band 3"],
    "t5": ["encoder bidir full"] * 2 + ["decoder causal full, cross full"] * 2,
}


def hasseflow_bin():
    env = os.environ.get("HASSEFLOW_BIN")
    if env:
        return env
    path = ROOT / "target" / "debug" / "hasseflow"
    if not path.exists():
        subprocess.run(["cargo", "build", "-p", "hasseflow-cli"], cwd=ROOT, check=True)
    return str(path)


# ------------------------------------------------------------------ workers (forked per type)

def worker(t, cache, conn):
    import torch

    torch.set_num_threads(1)
    lm.quiet()
    start = time.time()
    try:
        with tempfile.TemporaryDirectory() as d:
            res = lm.measure_type(t, d, cache)
    except lm.Unmeasurable as e:
        res = {"unmeasurable": str(e)}
    except BaseException as e:  # anything the library raises: recorded as the reason
        tb = traceback.extract_tb(e.__traceback__)
        where = next((f"{Path(f.filename).name}:{f.lineno}" for f in reversed(tb) if "transformers" in f.filename), "")
        res = {"unmeasurable": lm.short(e) + (f" [{where}]" if where else "")}
    res["seconds"] = round(time.time() - start, 2)
    conn.send(json.dumps(res))
    conn.close()


def measure_all(types, jobs, cache, timeout):
    """Runs one forked process per type, `jobs` at a time; returns {type: result}."""
    ctx = multiprocessing.get_context("fork")
    pending = list(types)
    running = {}  # conn -> (type, process, start)
    results = {}
    while pending or running:
        while pending and len(running) < jobs:
            t = pending.pop(0)
            parent, child = ctx.Pipe(duplex=False)
            p = ctx.Process(target=worker, args=(t, cache, child), daemon=True)
            p.start()
            child.close()
            running[parent] = (t, p, time.time())
        ready = wait(list(running), timeout=1.0)
        for conn in ready:
            t, p, _ = running.pop(conn)
            try:
                results[t] = json.loads(conn.recv())
            except EOFError:
                p.join(5)
                results[t] = {"unmeasurable": f"the measuring process died (exit {p.exitcode})"}
            conn.close()
            p.join(5)
            progress(t, results[t], len(results), len(types))
        now = time.time()
        for conn, (t, p, began) in list(running.items()):
            if now - began > timeout:
                p.kill()
                p.join(5)
                running.pop(conn)
                conn.close()
                results[t] = {"unmeasurable": f"timed out after {timeout} s"}
                progress(t, results[t], len(results), len(types))
    return results


def progress(t, res, done, total):
    what = "measured" if "reach" in res else f"not measurable: {res.get('unmeasurable', '?')[:100]}"
    print(f"[{done:3}/{total}] {t:28} {res.get('seconds', 0):6.1f}s  {what}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ comparing with hasseflow

def run_cli(binary, res, docs=None):
    """hasseflow's rows for the saved config (with `docs`: `--docs 20,36`): (per_layer types, {q:
    per-layer intervals}) or an error line."""
    encdec = "n_enc" in res
    n_total = res["n_enc"] + res["n_dec"] if encdec else lm.N
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "config.json"
        path.write_text(json.dumps(res["config"], indent=2, sort_keys=True) + "\n")
        cmd = [binary, "model", str(path), "--context", str(res["n_dec"] if encdec else lm.N), "--json"]
        if encdec:
            cmd += ["--encoder-context", str(res["n_enc"])]
        if docs:
            cmd += ["--docs", ",".join(map(str, docs))]
        for q in range(n_total):
            cmd += ["--row", str(q)]
        p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        return None, (lines[0] if lines else f"exit status {p.returncode}")[:300]
    try:
        out = json.loads(p.stdout)
    except json.JSONDecodeError as e:
        return None, f"unreadable JSON ({e})"
    return out, None


def cells(intervals):
    return {k for lo, hi in intervals for k in range(lo, hi + 1)}


def compare(res, out, key="reach"):
    """(outcome, message) for a measured result (`res[key]`) against hasseflow's JSON."""
    reach = res[key]  # [layer][q] -> intervals
    L = len(reach)
    per_layer = out.get("per_layer") or []
    rows = out.get("rows") or {}
    if len(per_layer) != L:
        return "wrong", f"hasseflow reports {len(per_layer)} layers, the model has {L}"
    missing = extra = 0
    first = None
    example = None
    for l in range(L):
        for q in range(len(reach[l])):
            got = rows.get(str(q))
            if got is None or len(got) != L:
                return "wrong", f"hasseflow gives no row {q} for every layer"
            want = cells(reach[l][q])
            have = cells(got[l])
            if want != have:
                miss, ext = want - have, have - want
                missing += len(miss)
                extra += len(ext)
                if first is None:
                    first = l + 1
                    k = min(miss) if miss else min(ext)
                    example = f"R({l + 1})[{q}, {k}] is {'set' if miss else 'unset'} in the model, {'unset' if miss else 'set'} in hasseflow"
    if first is None:
        return "equal", ""
    return "wrong", f"first differing layer {first}: {missing} cells missing, {extra} extra; e.g. {example}"


# ------------------------------------------------------------------ output

def report(entries, wall):
    fams = {}
    for e in entries:
        fams.setdefault(e["family"], []).append(e)
    cols = ["equal", "wrong", "refused", "not measurable"]
    print(f"{'family':16} {'types':>5} " + " ".join(f"{c:>14}" for c in cols) + "  types")
    for fam in sorted(fams):
        es = fams[fam]
        counts = [sum(e["outcome"] == c for e in es) for c in cols]
        names = ", ".join(e["type"] for e in es)
        print(f"{fam:16} {len(es):5} " + " ".join(f"{c:14}" for c in counts) + f"  {names[:90]}")
    total = {c: sum(e["outcome"] == c for e in entries) for c in cols}
    measured = total["equal"] + total["wrong"] + total["refused"]
    pct = 100.0 * total["equal"] / measured if measured else 0.0
    packing_table(entries)
    print()
    for c in ("wrong", "refused", "not measurable"):
        bad = [e for e in entries if e["outcome"] == c]
        if bad:
            print(f"{c}:")
            for e in bad:
                print(f"  {e['type']:28} {e['message']}")
    print()
    print(f"types {len(entries)}, measured {measured}, equal {total['equal']}, wrong {total['wrong']}, "
          f"refused {total['refused']}, not measurable {total['not measurable']}; "
          f"equal/measured {pct:.1f}% (needs {THRESHOLD * 100:.0f}%); wall time {wall:.0f} s")
    return total, measured


def packing_table(entries):
    """The packed-documents pass: which types keep the documents apart (their packed reach differs
    from the unpacked one) and which read across them, and how hasseflow's --docs run compares."""
    packed = [e for e in entries if "packed" in e]
    if not packed:
        return
    docs = ",".join(map(str, lm.DOCS))
    cols = ["equal", "wrong", "refused", "not measurable"]
    counts = {c: sum(e["packed"]["outcome"] == c for e in packed) for c in cols}
    print(f"\npacked documents {docs} (position ids restarting at 0, no attention_mask, no cache): "
          + ", ".join(f"{c} {counts[c]}" for c in cols))
    def group(detects, says=None):
        return sorted(e["type"] for e in packed if e["packed"].get("detects") is detects
                      and (says is None or e["packed"].get("hasseflow") == says))

    honour, masked, ignore = group(True), group(False, "detected"), group(False, "ignored")
    print(f"honour packing, documents kept apart ({len(honour)}): {', '.join(honour)}")
    print(f"masks detect packing, yet recurrent or convolution layers read across ({len(masked)}): {', '.join(masked)}")
    print(f"ignore packing, every layer reads across ({len(ignore)}): {', '.join(ignore)}")
    for c in ("wrong", "refused", "not measurable"):
        bad = [e for e in packed if e["packed"]["outcome"] == c]
        if bad:
            print(f"packed {c}:")
            for e in bad:
                print(f"  {e['type']:28} {e['packed']['message']}")


def packed_entry(binary, res):
    """The packed pass of one measured type: outcome and message against `hasseflow model --docs`,
    whether the model keeps the documents apart (its packed reach differs from the unpacked one),
    and what hasseflow says ("packing": "detected" | "ignored")."""
    if "packed_unmeasurable" in res:
        return {"outcome": "not measurable", "message": res["packed_unmeasurable"]}
    out, err = run_cli(binary, res, lm.DOCS)
    if err is not None:
        return {"outcome": "refused", "message": err}
    outcome, message = compare(res, out, "packed_reach")
    return {"outcome": outcome, "message": message, "detects": res["packed_reach"] != res["reach"],
            "hasseflow": out.get("packing")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated model types (default: every text model type)")
    ap.add_argument("--jobs", type=int, default=2, help="processes measuring at once (default 2)")
    ap.add_argument("--cache", help="reuse measurements from this directory (keyed by Transformers version, type, config)")
    ap.add_argument("--timeout", type=int, default=120, help="seconds one type may take (default 120)")
    args = ap.parse_args()
    start = time.time()
    lm.quiet()
    import torch

    torch.set_num_threads(1)
    lm.preload()  # what every type needs, imported once before the forks

    binary = hasseflow_bin()
    if not Path(binary).is_file():
        print(f"no hasseflow binary at {binary}")
        return 2
    types = lm.all_types()
    if args.only:
        wanted = [t.strip() for t in args.only.split(",") if t.strip()]
        unknown = [t for t in wanted if t not in types]
        if unknown:
            print(f"unknown type(s): {', '.join(unknown)}")
            return 2
        types = wanted
    results = measure_all(types, max(1, args.jobs), args.cache, args.timeout)
    entries = []
    kinds = {}
    for t in types:
        res = results[t]
        e = {"type": t, "family": lm.family(t), "notes": res.get("notes", []), "seconds": res.get("seconds")}
        if "reach" not in res:
            e.update(outcome="not measurable", message=res.get("unmeasurable", "unknown"))
        else:
            out, err = run_cli(binary, res)
            if err is not None:
                e.update(outcome="refused", message=err)
            else:
                e.update(dict(zip(("outcome", "message"), compare(res, out))))
                e["hasseflow_layer_types"] = [p.get("type") for p in out.get("per_layer", [])]
            if "packed_reach" in res or "packed_unmeasurable" in res:
                e["packed"] = packed_entry(binary, res)
            e["measured"] = {"layers": res["layers"], "kinds": res["kinds"],
                             "rows": {str(q): [res["reach"][l][q] for l in range(res["layers"])]
                                      for q in range(len(res["reach"][0]))}}
            for k in ("n_enc", "n_dec", "encoder_layers", "decoder_layers"):
                if k in res:
                    e["measured"][k] = res[k]
            e["config"] = res["config"]
            kinds[t] = {"layers": res["kinds"], "set": lm.fields_set(t, res["config"]), "notes": res.get("notes", [])}
        entries.append(e)
    wall = time.time() - start
    total, measured = report(entries, wall)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    import transformers as tr

    OUT.write_text(json.dumps({"transformers_version": tr.__version__, "n": lm.N, "wall_seconds": round(wall, 1),
                               "types": entries}, indent=1) + "\n")
    KINDS_OUT.write_text(json.dumps(kinds, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)} and {KINDS_OUT.relative_to(ROOT)}")
    tally = Tally()
    for t, want in SANITY.items():
        if t in results:
            got = [k.replace(" (inferred)", "") for k in results[t].get("kinds", [])]
            tally.check(got == want, f"measure self-check {t}: kinds {got or results[t].get('unmeasurable')}, expected {want}")
    # the varlen arguments (docs/MODELS.md): read by no eager mask builder, only the position ids count
    tally.check(lm.varlen_reads_across() == (True, False), "eager Llama: cu_seq_lens alone reads across the documents, "
                                                           "with DataCollatorWithFlattening's position_ids it does not")
    # the window shrinking and its guard, on a made-up NeoMME-style config
    made_up = {"sliding_window": 256, "per_layer_config": {"1": {"sliding_window": 1024}, "2": {"sliding_window": None}}}
    tally.check(lm.window_sizes(made_up)["sliding_window"] == {256: 8, 1024: 12}, "window_sizes keeps sizes apart")
    tally.check(lm.unshrunk_windows({"text_config": made_up}) == ["text_config.sliding_window = 256",
                                                                  "text_config.per_layer_config.1.sliding_window = 1024"],
                "unshrunk_windows finds windows of n or more, per-layer ones included")
    for e in entries:
        if e.get("config"):
            big = lm.unshrunk_windows(e["config"])
            tally.check(not big, f"{e['type']}: windows not below n = {lm.N} in the saved config: {', '.join(big)}")
    packed_wrong = sum(e.get("packed", {}).get("outcome") == "wrong" for e in entries)
    # hasseflow's "packing" field agrees with what the model does wherever the documents change its reach
    for e in entries:
        p = e.get("packed", {})
        if p.get("outcome") == "equal" and p["detects"]:
            tally.check(p["hasseflow"] == "detected", f"{e['type']}: keeps packed documents apart, hasseflow says "
                                                      f"packing {p['hasseflow']}")
    tally.passed = total["equal"]
    tally.failed += total["wrong"] + packed_wrong
    if not measured or total["equal"] / measured < THRESHOLD:
        tally.failed += total["refused"] + (0 if measured else 1)
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
