#!/usr/bin/env python3
"""Checks the mask_mod importer's library preludes against the libraries they stand for.

crates/mask_mod/src/library/ holds Python written in the importer's subset that
reimplements `attn_gym.masks` (attention-gym), `transformers.masking_utils` and the mask helpers of
`torch.nn.attention.flex_attention`. Here each prelude is exec'd as ordinary Python with real torch
and every function in it is compared with the real library function:

- masks: `create_mask(fn, B, H, Q, KV, device="cpu")` of the prelude's function equals the real
  one's (values, dtype, shape) for several parameter sets and sizes 1..100, with B and H above 1
  where the function reads the batch or head; where the real one fails (an index past a table),
  the prelude's fails with the same exception type;
- the function's `__name__` (attn_gym names its masks after their parameters);
- helpers that return tensors (length_to_offsets, build_tree_ancestor_matrix, the Morton codes)
  give equal tensors;
- factory-time refusals (non-callables, failed assertions, bad shapes) raise the same exception
  type with the same message;
- each prelude stays inside the interpreter's subset (checked on its syntax tree).

Prints one line per failure and ends with "N passed, M failed"; exits non-zero on any failure.
"""

import ast
import os
import random
import traceback

import torch
import torch.nn.attention.flex_attention as flex
from torch.nn.attention.flex_attention import create_mask
import transformers.masking_utils as hf

from tally import Tally, exit_with

HERE = os.path.dirname(os.path.abspath(__file__))
LIBRARY = os.path.join(HERE, "..", "..", "crates", "mask_mod", "src", "library")
TALLY = Tally()
check = TALLY.check
SIZES = [1, 2, 3, 5, 8, 13, 16, 31, 64, 100]


def load(file):
    path = os.path.join(LIBRARY, file)
    with open(path) as f:
        text = f.read()
    ns = {"__name__": "prelude_" + file[:-3]}
    exec(compile(text, path, "exec"), ns)
    return text, ns


def outcome(fn, B, H, Q, KV):
    try:
        return True, create_mask(fn, B, H, Q, KV, device="cpu")
    except Exception as e:  # noqa: BLE001 - the failure's type is compared
        return False, type(e).__name__


def same_mask(what, real, ours, B=1, H=1, Q=8, KV=None, fails=False):
    """Both functions give the same create_mask (or, with fails, raise the same type)."""
    KV = Q if KV is None else KV
    r_ok, r = outcome(real, B, H, Q, KV)
    o_ok, o = outcome(ours, B, H, Q, KV)
    where = f"{what} B={B} H={H} Q={Q} KV={KV}"
    if r_ok and o_ok:
        same = r.dtype == o.dtype and r.shape == o.shape and torch.equal(r, o)
        detail = "" if same else (
            f": dtype {r.dtype}/{o.dtype}, shape {tuple(r.shape)}/{tuple(o.shape)}"
            + (f", first differences at {(r != o).nonzero()[:3].tolist()}" if r.shape == o.shape else "")
        )
        check(same and not fails, f"{where}: prelude differs from the library{detail}"
              if not same else f"{where}: the library was expected to fail")
    elif not r_ok and not o_ok:
        check(fails and r == o, f"{where}: library raised {r}, prelude raised {o}"
              + ("" if fails else " (a valid case)"))
    else:
        check(False, f"{where}: library {'ok' if r_ok else 'raised ' + r}, "
                     f"prelude {'ok' if o_ok else 'raised ' + o}")


def same_name(what, real, ours):
    check(getattr(real, "__name__", None) == getattr(ours, "__name__", None),
          f"{what}: __name__ {getattr(real, '__name__', None)!r} vs {getattr(ours, '__name__', None)!r}")


def same_both(what, real, ours, **kw):
    same_name(what, real, ours)
    same_mask(what, real, ours, **kw)


def same_refusal(what, real_call, ours_call):
    """Both calls raise, with the same exception type and message."""
    def run(call):
        try:
            call()
        except Exception as e:  # noqa: BLE001 - compared below
            return type(e).__name__, str(e)
        return None
    r, o = run(real_call), run(ours_call)
    check(r is not None and r == o, f"{what}: library raised {r}, prelude raised {o}")


def same_tensor(what, real, ours):
    ok = (torch.is_tensor(real) and torch.is_tensor(ours) and real.dtype == ours.dtype
          and real.shape == ours.shape and torch.equal(real, ours))
    check(ok, f"{what}: {real!r} vs {ours!r}")


# ---------------------------------------------------------------------------------------------
# The interpreter's subset, checked on each prelude's syntax tree.

FORBIDDEN_NODES = {
    ast.ClassDef: "a class", ast.Try: "try/except", ast.With: "with", ast.While: "while",
    ast.AsyncFunctionDef: "async def", ast.ListComp: "a list comprehension",
    ast.SetComp: "a set comprehension", ast.DictComp: "a dict comprehension",
    ast.GeneratorExp: "a generator expression", ast.Global: "global", ast.Nonlocal: "nonlocal",
    ast.Yield: "yield", ast.YieldFrom: "yield", ast.ImportFrom: "from-import",
    ast.BoolOp: "Python and/or", ast.AugAssign: "augmented assignment", ast.Slice: "a slice",
    ast.Await: "await", ast.NamedExpr: ":=", ast.IfExp: "a conditional expression",
    ast.Set: "a set", ast.Starred: "a starred expression",
}
FORBIDDEN_OPS = {ast.Div: "/", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.MatMult: "@"}


def subset_problems(text):
    tree = ast.parse(text)
    problems = []

    def bad(node, what):
        problems.append(f"line {node.lineno}: {what}")

    for node in ast.walk(tree):
        for kind, what in FORBIDDEN_NODES.items():
            if isinstance(node, kind):
                bad(node, what)
        if isinstance(node, ast.BinOp) and type(node.op) in FORBIDDEN_OPS:
            bad(node, f"the operator {FORBIDDEN_OPS[type(node.op)]}")
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name not in ("torch", "functools", "math", "random") or alias.asname:
                    bad(node, f"import {alias.name}")
        if isinstance(node, (ast.FunctionDef, ast.Lambda)) and getattr(node, "decorator_list", []):
            bad(node, "a decorator")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
            bad(node, "isinstance")
        if isinstance(node, ast.JoinedStr):
            bad(node, "an f-string")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            # `not` only on a Python bool from a builtin predicate, never on a tensor.
            if not (isinstance(node.operand, ast.Call) and isinstance(node.operand.func, ast.Name)
                    and node.operand.func.id == "callable"):
                bad(node, "`not` on anything but callable(...)")
        if isinstance(node, ast.Compare):
            for op, right in zip(node.ops, node.comparators):
                if isinstance(op, (ast.Is, ast.IsNot)) and not (
                        isinstance(right, ast.Constant) and right.value is None):
                    bad(node, "`is` other than `is None`")
                if isinstance(op, (ast.In, ast.NotIn)):
                    bad(node, "`in`")
            if len(node.ops) > 1:
                bad(node, "a chained comparison")
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Subscript):
                    bad(node, "item assignment")
                if isinstance(target, ast.Attribute) and target.attr != "__name__":
                    bad(node, f"assignment to .{target.attr}")
        if isinstance(node, ast.Raise) and node.exc is not None:
            call = node.exc
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                    and call.func.id in ("ValueError", "RuntimeError", "IndexError")):
                bad(node, "a raise other than ValueError/RuntimeError/IndexError(...)")
    return problems


# ---------------------------------------------------------------------------------------------
# Mask functions the combinators are tried on (plain Python, the same for both sides).

def m_causal(b, h, q, k):
    return q >= k


def m_window3(b, h, q, k):
    return (q - k).abs() <= 3


def m_even_head(b, h, q, k):
    return (h % 2 == 0) | (k % 3 == 0)


def m_batch_band(b, h, q, k):
    return (q - k) <= b * 2 + 1


def m_first_keys(b, h, q, k):
    # Not shift-invariant: tells whether a wrapper passes positions relative to a start.
    return (k < 2) | (q % 3 == k % 2)


PARTS = [m_causal, m_window3, m_even_head, m_batch_band]


class BlockCounts:
    """Stands for the reader's native `hasseflow.block_counts` when the prelude runs under torch:
    the attended cells of each block, counted on create_mask's dense mask."""

    @staticmethod
    def block_counts(mask_mod, B, H, Q, KV, q_block, kv_block):
        dense = create_mask(mask_mod, B, H, Q, KV, device="cpu").expand(B, H, Q, KV).to(torch.int64)
        nq, nk = -(-Q // q_block), -(-KV // kv_block)
        padded = torch.nn.functional.pad(dense, (0, nk * kv_block - KV, 0, nq * q_block - Q))
        return padded.view(B, H, nq, q_block, nk, kv_block).sum(dim=(3, 5))


def check_nested():
    """torch.nested (jagged): offsets, values and parts equal torch's for lists and from_jagged."""
    _, nested = load("torch_nested.py")
    rng = random.Random(3)
    for trial in range(8):
        lengths = [rng.randint(1, 6) for _ in range(rng.randint(1, 4))]
        parts = [torch.arange(k) * (i + 1) for i, k in enumerate(lengths)]
        real = torch.nested.nested_tensor(parts, layout=torch.jagged)
        ours = nested["nested_tensor"](parts, layout=torch.jagged)
        check(torch.equal(ours.offsets(), real.offsets()) and ours.offsets().dtype == real.offsets().dtype,
              f"nested_tensor{lengths}: offsets")
        check(torch.equal(ours.values(), real.values()), f"nested_tensor{lengths}: values")
        check(ours.size(0) == real.size(0), f"nested_tensor{lengths}: size(0)")
        flat = torch.arange(sum(lengths))
        offs = torch.tensor([0] + list(torch.tensor(lengths).cumsum(0).tolist()))
        for kw in ({"offsets": offs}, {"lengths": torch.tensor(lengths)}):
            real = torch.nested.nested_tensor_from_jagged(flat, **kw)
            ours = nested["nested_tensor_from_jagged"](flat, **kw)
            check(torch.equal(ours.offsets(), real.offsets()), f"nested_tensor_from_jagged({list(kw)}): offsets")
            check(all(torch.equal(a, b) for a, b in zip(ours.unbind(), real.unbind())),
                  f"nested_tensor_from_jagged({list(kw)}): parts")


def check_block_masks(ns):
    """create_block_mask's object: shape, BLOCK_SIZE and the four block tables equal torch's; the
    private constants the prelude offers equal torch's."""
    check(ns["_DEFAULT_SPARSE_BLOCK_SIZE"] == flex._DEFAULT_SPARSE_BLOCK_SIZE, "_DEFAULT_SPARSE_BLOCK_SIZE")
    rng = random.Random(7)
    for trial in range(10):
        part = rng.choice(PARTS)
        B, H = rng.randint(1, 2), rng.randint(1, 3)
        Q, KV = rng.choice([8, 13, 32, 40]), rng.choice([8, 16, 29, 40])
        bs = rng.choice([4, 8, (4, 8), 16])
        what = f"create_block_mask({part.__name__}, {B}, {H}, {Q}, {KV}, BLOCK_SIZE={bs})"
        real = flex.create_block_mask(part, B, H, Q, KV, device="cpu", BLOCK_SIZE=bs)
        ours = ns["create_block_mask"](part, B, H, Q, KV, device="cpu", BLOCK_SIZE=bs)
        check(tuple(ours.shape) == tuple(real.shape), f"{what}: shape {ours.shape} vs {real.shape}")
        check(tuple(ours.BLOCK_SIZE) == tuple(real.BLOCK_SIZE), f"{what}: BLOCK_SIZE")
        check(ours.mask_mod is part, f"{what}: mask_mod")
        for table in ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices"):
            a, b = getattr(ours, table), getattr(real, table)
            check(a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b), f"{what}: {table} differs")
        back = ns["BlockMask"].from_kv_blocks(real.kv_num_blocks, real.kv_indices, real.full_kv_num_blocks,
                                              real.full_kv_indices, BLOCK_SIZE=bs, mask_mod=part)
        check(tuple(back.shape) == tuple(flex.BlockMask.from_kv_blocks(
            real.kv_num_blocks, real.kv_indices, real.full_kv_num_blocks, real.full_kv_indices, BLOCK_SIZE=bs,
            mask_mod=part).shape), f"{what}: from_kv_blocks shape")


def check_flex(ns):
    for n in SIZES:
        same_both(f"noop_mask n={n}", flex.noop_mask, ns["noop_mask"], B=2, H=3, Q=n)
        same_both(f"and_masks() n={n}", flex.and_masks(), ns["and_masks"](), B=2, H=2, Q=n)
        same_both(f"or_masks() n={n}", flex.or_masks(), ns["or_masks"](), B=2, H=2, Q=n)
    rng = random.Random(1)
    for trial in range(12):
        parts = rng.sample(PARTS, rng.randint(1, 4))
        n = rng.choice(SIZES)
        names = "+".join(p.__name__ for p in parts)
        same_both(f"and_masks({names}) n={n}", flex.and_masks(*parts), ns["and_masks"](*parts), B=3, H=4, Q=n)
        same_both(f"or_masks({names}) n={n}", flex.or_masks(*parts), ns["or_masks"](*parts), B=3, H=4, Q=n)
        inner_r, inner_o = flex.or_masks(*parts), ns["or_masks"](*parts)
        same_both(f"and_masks(or_masks({names}), noop) n={n}",
                  flex.and_masks(inner_r, flex.noop_mask), ns["and_masks"](inner_o, ns["noop_mask"]),
                  B=2, H=2, Q=n)
    same_mask("and_masks Q!=KV", flex.and_masks(m_causal, m_window3), ns["and_masks"](m_causal, m_window3), Q=7, KV=19)
    check_block_masks(ns)
    check_nested()
    _, gym_utils = load("attn_gym_utils.py")
    import attn_gym.utils as real_utils
    for x in range(-9, 10):
        for y in (-4, -3, -1, 1, 2, 3, 7):
            check(gym_utils["cdiv"](x, y) == real_utils.cdiv(x, y), f"attn_gym.utils.cdiv({x}, {y})")
    for name in ("and_masks", "or_masks"):
        same_refusal(f"{name}(causal, 3)", lambda: getattr(flex, name)(m_causal, 3),
                     lambda: ns[name](m_causal, 3))
        same_refusal(f"{name}(None)", lambda: getattr(flex, name)(None), lambda: ns[name](None))


# ---------------------------------------------------------------------------------------------
# transformers.masking_utils

def packed_ids(rng, B, n):
    rows = []
    for _ in range(B):
        row, seq = [], 0
        while len(row) < n:
            length = rng.randint(1, max(1, n // 3))
            row += [seq] * length
            seq += 1
        rows.append(row[:n])
    return torch.tensor(rows)


def position_ids_of(packed):
    out = torch.zeros_like(packed)
    for b in range(packed.shape[0]):
        for i in range(1, packed.shape[1]):
            out[b, i] = out[b, i - 1] + 1 if packed[b, i] == packed[b, i - 1] else 0
    return out


def check_masking_utils(ns):
    for n in SIZES:
        same_both(f"causal_mask_function n={n}", hf.causal_mask_function, ns["causal_mask_function"], B=2, H=2, Q=n)
        same_both(f"bidirectional_mask_function n={n}", hf.bidirectional_mask_function,
                  ns["bidirectional_mask_function"], B=2, H=2, Q=n)
        for w in (0, 1, 2, 5, 17, 64, 200, -3):
            for name in ("sliding_window_overlay", "sliding_window_causal_mask_function",
                         "sliding_window_bidirectional_overlay", "sliding_window_bidirectional_mask_function"):
                same_both(f"{name}({w}) n={n}", getattr(hf, name)(w), ns[name](w), Q=n)
                same_both(f"{name}(sliding_window={w}) n={n} Q!=KV", getattr(hf, name)(sliding_window=w),
                          ns[name](sliding_window=w), Q=max(1, n // 2), KV=n)
    rng = random.Random(2)
    for trial in range(16):
        n = rng.choice(SIZES)
        B = rng.randint(1, 4)
        H = rng.randint(1, 3)
        left = torch.tensor([rng.randint(0, n) for _ in range(B)])
        chunk = rng.choice([1, 2, 3, 4, 8, 13, 50, 128])
        for name in ("chunked_overlay", "chunked_causal_mask_function"):
            same_both(f"{name}({chunk}, {left.tolist()}) n={n}", getattr(hf, name)(chunk, left),
                      ns[name](chunk_size=chunk, left_padding=left), B=B, H=H, Q=n)
        ids = packed_ids(rng, B, n)
        blocks = torch.where(ids % 2 == 1, -1, ids // 2)  # every other block is text; ids from 0
        same_both(f"blockwise_overlay n={n} B={B}", hf.blockwise_overlay(blocks), ns["blockwise_overlay"](blocks), B=B, H=H, Q=n)
        padding = torch.rand(B, n, generator=torch.Generator().manual_seed(trial)) < 0.7
        same_both(f"padding_mask_function n={n} B={B}", hf.padding_mask_function(padding),
                  ns["padding_mask_function"](padding), B=B, H=H, Q=n)
        same_mask(f"padding_mask_function short key axis n={n}", hf.padding_mask_function(padding),
                  ns["padding_mask_function"](padding), B=B, Q=n, KV=n + 1, fails=True)
        same_both(f"packed_sequence_mask_function n={n} B={B}", hf.packed_sequence_mask_function(ids),
                  ns["packed_sequence_mask_function"](ids), B=B, H=H, Q=n)
        positions = position_ids_of(ids)
        for real_inner, our_inner, label in (
                (hf.causal_mask_function, ns["causal_mask_function"], "causal"),
                (hf.sliding_window_causal_mask_function(3), ns["sliding_window_causal_mask_function"](3), "sliding 3")):
            same_both(f"remap_positions_for_packed_sequence({label}) n={n} B={B}",
                      hf.remap_positions_for_packed_sequence(real_inner, positions),
                      ns["remap_positions_for_packed_sequence"](our_inner, positions), B=B, H=H, Q=n)
            same_both(f"and_masks(remap({label}), packed) n={n}",
                      hf.and_masks(hf.remap_positions_for_packed_sequence(real_inner, positions),
                                   hf.packed_sequence_mask_function(ids)),
                      ns["and_masks"](ns["remap_positions_for_packed_sequence"](our_inner, positions),
                                      ns["packed_sequence_mask_function"](ids)), B=B, H=H, Q=n)
        q_off, kv_off = rng.randint(0, 40), rng.randint(0, 40)
        kv_padding = torch.rand(B, n + kv_off, generator=torch.Generator().manual_seed(100 + trial)) < 0.8
        pairs = [
            (hf.causal_mask_function, ns["causal_mask_function"], "causal"),
            (hf.sliding_window_causal_mask_function(5), ns["sliding_window_causal_mask_function"](5), "sliding 5"),
            (hf.and_masks(hf.causal_mask_function, hf.padding_mask_function(kv_padding)),
             ns["and_masks"](ns["causal_mask_function"], ns["padding_mask_function"](kv_padding)), "causal+padding"),
        ]
        for real_inner, our_inner, label in pairs:
            same_both(f"add_offsets_to_mask_function({label}, {q_off}, {kv_off}) n={n}",
                      hf.add_offsets_to_mask_function(real_inner, q_off, kv_off),
                      ns["add_offsets_to_mask_function"](our_inner, q_offset=q_off, kv_offset=kv_off), B=B, H=H, Q=n)
        same_both(f"or_masks(chunked, blockwise, padding) n={n}",
                  hf.or_masks(hf.chunked_overlay(chunk, left), hf.blockwise_overlay(blocks), hf.padding_mask_function(padding)),
                  ns["or_masks"](ns["chunked_overlay"](chunk, left), ns["blockwise_overlay"](blocks),
                                 ns["padding_mask_function"](padding)), B=B, H=H, Q=n)
    for n in (1, 7, 64):
        same_both(f"hf and_masks() n={n}", hf.and_masks(), ns["and_masks"](), B=2, H=2, Q=n)
        same_both(f"hf or_masks() n={n}", hf.or_masks(), ns["or_masks"](), B=2, H=2, Q=n)
        for parts in ([m_causal, m_window3], [m_even_head, m_batch_band, m_causal]):
            names = "+".join(p.__name__ for p in parts)
            same_both(f"hf and_masks({names}) n={n}", hf.and_masks(*parts), ns["and_masks"](*parts), B=3, H=3, Q=n)
            same_both(f"hf or_masks({names}) n={n}", hf.or_masks(*parts), ns["or_masks"](*parts), B=3, H=3, Q=n)
    for name in ("and_masks", "or_masks"):
        same_refusal(f"hf {name}(causal, 'x')", lambda: getattr(hf, name)(m_causal, "x"),
                     lambda: ns[name](m_causal, "x"))


# ---------------------------------------------------------------------------------------------
# attn_gym.masks

def random_lengths(rng, total, docs):
    cuts = sorted(rng.sample(range(1, total), docs - 1)) if docs > 1 else []
    bounds = [0] + cuts + [total]
    return [bounds[i + 1] - bounds[i] for i in range(docs)]


def random_tree(rng, nodes):
    return [-1] + [rng.randint(0, i - 1) for i in range(1, nodes)]


def check_attn_gym(ns, ag, flex_ns):
    from attn_gym.masks import document_mask as ag_doc, natten as ag_natten, vsa as ag_vsa

    for n in SIZES:
        same_both(f"causal_mask n={n}", ag.causal_mask, ns["causal_mask"], Q=n)
        same_mask(f"causal_mask n={n} Q!=KV", ag.causal_mask, ns["causal_mask"], Q=n, KV=max(1, 100 - n))
        for w in (0, 1, 3, 10, 99):
            same_both(f"generate_sliding_window({w}) n={n}", ag.generate_sliding_window(w),
                      ns["generate_sliding_window"](window_size=w), Q=n)
        for p in (0, 1, 4, 50, 120):
            same_both(f"generate_prefix_lm_mask({p}) n={n}", ag.generate_prefix_lm_mask(p),
                      ns["generate_prefix_lm_mask"](prefix_length=p), Q=n)
        for w, d in ((1, 1), (4, 2), (9, 3), (30, 7), (0, 5)):
            same_both(f"generate_dilated_sliding_window({w}, {d}) n={n}", ag.generate_dilated_sliding_window(w, d),
                      ns["generate_dilated_sliding_window"](window_size=w, dilation=d), Q=n)
        for size in (1, 3, 4, 16):
            for real_inner, our_inner in ((ag.causal_mask, ns["causal_mask"]), (flex.noop_mask, flex_ns["noop_mask"]),
                                          (m_first_keys, m_first_keys)):
                same_both(f"batchify_mask_mod({real_inner.__name__}, {size}) n={n}",
                          ag.batchify_mask_mod(real_inner, size),
                          ns["batchify_mask_mod"](our_inner, batchify_size=size), Q=n)
        for seq_len, block in ((1, 1), (3, 1), (6, 2), (12, 4), (50, 7)):
            same_both(f"generate_block_diffusion_mask({seq_len}, {block}) n={n}",
                      ag.generate_block_diffusion_mask(seq_len, block),
                      ns["generate_block_diffusion_mask"](seq_len=seq_len, block_size=block), Q=n)
        for sink in (False, True):
            same_both(f"generate_spatial_head_mask_mod() attn_sink={sink} n={n}",
                      ag.generate_spatial_head_mask_mod(attn_sink=sink),
                      ns["generate_spatial_head_mask_mod"](attn_sink=sink), Q=n)
            same_both(f"generate_spatial_head_mask_mod(small, attn_sink={sink}) n={n}",
                      ag.generate_spatial_head_mask_mod(2, 10, 14, 2, sink, 4),
                      ns["generate_spatial_head_mask_mod"](prompt_length=2, num_frames=10, token_per_frame=14,
                                                           width=2, attn_sink=sink, round_width=4), Q=n)
            for args in ((3, 5, 7, 2, sink, 4), (1, 2, 9, 3, sink, 10), (0, 1, 5, 1, sink, 3)):
                same_both(f"generate_spatial_head_mask_mod{args} n={n}", ag.generate_spatial_head_mask_mod(*args),
                          ns["generate_spatial_head_mask_mod"](*args), Q=n)
        same_both(f"generate_temporal_head_mask_mod() n={n}", ag.generate_temporal_head_mask_mod(),
                  ns["generate_temporal_head_mask_mod"](), Q=n)
        for args in ((2, 10, 14, 2), (0, 4, 9, 1), (5, 3, 7, 3)):
            same_both(f"generate_temporal_head_mask_mod{args} n={n}", ag.generate_temporal_head_mask_mod(*args),
                      ns["generate_temporal_head_mask_mod"](*args), Q=n)
    same_mask("generate_spatial_head_mask_mod(round_width=0)", ag.generate_spatial_head_mask_mod(round_width=0),
              ns["generate_spatial_head_mask_mod"](round_width=0), Q=4, fails=True)
    same_mask("generate_temporal_head_mask_mod(num_frames=0)", ag.generate_temporal_head_mask_mod(num_frames=0),
              ns["generate_temporal_head_mask_mod"](num_frames=0), Q=4, fails=True)

    # An example batch's lengths, drawn from the shared `random` module after the same seed.
    for seed, total, docs in ((0, 64, 4), (7, 10, 10), (2**40 + 1, 300, 9), (-5, 20, 1)):
        random.seed(seed)
        theirs = ag_doc.generate_random_lengths(total, docs)
        random.seed(seed)
        ours = ns["generate_random_lengths"](total, docs)
        check(theirs == ours, f"generate_random_lengths({total}, {docs}) after random.seed({seed}): {ours} != {theirs}")

    rng = random.Random(3)
    # Packed documents.
    for trial in range(14):
        n = rng.choice(SIZES)
        docs = rng.randint(1, min(n, 6))
        lengths = random_lengths(rng, n, docs) if n > 1 else [1]
        offsets = ag_doc.length_to_offsets(lengths, "cpu")
        same_tensor(f"length_to_offsets({lengths})", offsets, ns["length_to_offsets"](lengths, "cpu"))
        for real_inner, our_inner in ((ag.causal_mask, ns["causal_mask"]), (flex.noop_mask, flex_ns["noop_mask"]),
                                      (m_window3, m_window3), (m_first_keys, m_first_keys)):
            same_both(f"generate_doc_mask_mod({real_inner.__name__}, {lengths})",
                      ag.generate_doc_mask_mod(real_inner, offsets),
                      ns["generate_doc_mask_mod"](our_inner, offsets=offsets), B=2, H=2, Q=n)
        same_mask(f"generate_doc_mask_mod past the documents {lengths}", ag.generate_doc_mask_mod(ag.causal_mask, offsets),
                  ns["generate_doc_mask_mod"](ns["causal_mask"], offsets), Q=n + 1, fails=True)
        same_both(f"generate_packed_causal_doc_mask_mod({lengths})", ag.generate_packed_causal_doc_mask_mod(offsets),
                  ns["generate_packed_causal_doc_mask_mod"](offsets=offsets), Q=n)
        same_mask(f"generate_packed_causal_doc_mask_mod Q<KV {lengths}", ag.generate_packed_causal_doc_mask_mod(offsets),
                  ns["generate_packed_causal_doc_mask_mod"](offsets), Q=max(1, n // 2), KV=n + 5)
        prefix_of = []
        for d in range(docs):
            prefix_of.append(d if d == 0 or rng.random() < 0.4 else rng.choice(
                [p for p in range(d) if prefix_of[p] == p]))
        prefix_ids = torch.tensor(prefix_of)
        same_both(f"generate_shared_prefix_mask_mod({lengths}, {prefix_of})",
                  ag.generate_shared_prefix_mask_mod(offsets, prefix_ids),
                  ns["generate_shared_prefix_mask_mod"](offsets=offsets, prefix_document_id=prefix_ids), Q=n)
    shifted = torch.tensor([3, 5, 9, 10])  # offsets not starting at 0
    same_both("generate_doc_mask_mod offsets from 3", ag.generate_doc_mask_mod(ag.causal_mask, shifted),
              ns["generate_doc_mask_mod"](ns["causal_mask"], shifted), Q=7)
    same_refusal("generate_doc_mask_mod negative length", lambda: ag.generate_doc_mask_mod(ag.causal_mask, torch.tensor([0, 4, 2])),
                 lambda: ns["generate_doc_mask_mod"](ns["causal_mask"], torch.tensor([0, 4, 2])))
    same_refusal("generate_shared_prefix_mask_mod 2D offsets",
                 lambda: ag.generate_shared_prefix_mask_mod(torch.zeros(2, 2, dtype=torch.long), torch.zeros(1, dtype=torch.long)),
                 lambda: ns["generate_shared_prefix_mask_mod"](torch.zeros(2, 2, dtype=torch.long), torch.zeros(1, dtype=torch.long)))
    same_refusal("generate_shared_prefix_mask_mod count mismatch",
                 lambda: ag.generate_shared_prefix_mask_mod(torch.tensor([0, 2, 4]), torch.tensor([0])),
                 lambda: ns["generate_shared_prefix_mask_mod"](torch.tensor([0, 2, 4]), torch.tensor([0])))

    # Flamingo cross attention.
    for trial in range(8):
        images = rng.randint(1, 5)
        tokens = rng.randint(1, 6)
        text = rng.randint(1, 40)
        intervals = []
        for _ in range(images):
            a = rng.randint(0, text)
            intervals.append([a, rng.randint(a, text)])
        iv = torch.tensor(intervals, dtype=torch.int32)
        same_both(f"generate_vision_cross_attention_mask_mod({intervals}, {tokens})",
                  ag.generate_vision_cross_attention_mask_mod(iv, tokens),
                  ns["generate_vision_cross_attention_mask_mod"](intervals=iv, image_token_length=tokens),
                  Q=text, KV=images * tokens)
        same_mask(f"generate_vision_cross_attention_mask_mod past the images {intervals}",
                  ag.generate_vision_cross_attention_mask_mod(iv, tokens),
                  ns["generate_vision_cross_attention_mask_mod"](iv, tokens), Q=text, KV=images * tokens + 1, fails=True)

    same_refusal("generate_vision_cross_attention_mask_mod negative image length",
                 lambda: ag.generate_vision_cross_attention_mask_mod(torch.tensor([[0, 1]]), -1),
                 lambda: ns["generate_vision_cross_attention_mask_mod"](torch.tensor([[0, 1]]), -1))

    # Longformer.
    for trial in range(10):
        n = rng.choice(SIZES)
        is_global = torch.rand(n, generator=torch.Generator().manual_seed(trial)) < 0.1
        w = rng.choice([0, 1, 3, 8])
        same_both(f"generate_global_sliding_window({w}) n={n}", ag.generate_global_sliding_window(w, is_global),
                  ns["generate_global_sliding_window"](window_size=w, is_global=is_global), Q=n)

    # JetSpec.
    for trial in range(10):
        nodes = rng.randint(1, 30)
        parents = random_tree(rng, nodes)
        real_anc = ag.build_tree_ancestor_matrix(parents, device="cpu")
        our_anc = ns["build_tree_ancestor_matrix"](parents, device="cpu")
        same_tensor(f"build_tree_ancestor_matrix({parents})", real_anc, our_anc)
        prefix = rng.choice([0, 1, 5, 20])
        same_both(f"generate_jetspec_tree_causal_mask_mod({prefix}, tree of {nodes})",
                  ag.generate_jetspec_tree_causal_mask_mod(prefix, real_anc),
                  ns["generate_jetspec_tree_causal_mask_mod"](prefix_length=prefix, ancestor_matrix=our_anc),
                  Q=nodes, KV=prefix + nodes + rng.randint(0, 5))
        block = rng.randint(1, 6)
        blocks = rng.randint(1, 5)
        same_both(f"generate_jetspec_training_mask_mod({prefix}, {block})",
                  ag.generate_jetspec_training_mask_mod(prefix, block),
                  ns["generate_jetspec_training_mask_mod"](prefix_length=prefix, block_size=block),
                  Q=blocks * block, KV=prefix + blocks * block)
    for parents in ([-1, 2, 0, 1], [-1, -1, 0], [-1, 0, -2, 1, 3], [5], [-1, 1]):
        same_tensor(f"build_tree_ancestor_matrix({parents}) (odd parents)",
                    ag.build_tree_ancestor_matrix(parents, device="cpu"),
                    ns["build_tree_ancestor_matrix"](parents, device="cpu"))
    same_refusal("build_tree_ancestor_matrix parent out of range",
                 lambda: ag.build_tree_ancestor_matrix([-1, 7], device="cpu"),
                 lambda: ns["build_tree_ancestor_matrix"]([-1, 7], device="cpu"))
    float_anc = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    same_both("generate_jetspec_tree_causal_mask_mod float matrix", ag.generate_jetspec_tree_causal_mask_mod(1, float_anc),
              ns["generate_jetspec_tree_causal_mask_mod"](1, float_anc), Q=2, KV=3)
    for args in ((-1, torch.eye(2, dtype=torch.bool)), (0, torch.ones(3, dtype=torch.bool)),
                 (0, torch.ones(2, 3, dtype=torch.bool)), (0, torch.ones(0, 0, dtype=torch.bool))):
        same_refusal(f"generate_jetspec_tree_causal_mask_mod refuses {args[0]}, shape {tuple(args[1].shape)}",
                     lambda: ag.generate_jetspec_tree_causal_mask_mod(*args),
                     lambda: ns["generate_jetspec_tree_causal_mask_mod"](*args))
    for args in ((-1, 2), (0, 0)):
        same_refusal(f"generate_jetspec_training_mask_mod{args}", lambda: ag.generate_jetspec_training_mask_mod(*args),
                     lambda: ns["generate_jetspec_training_mask_mod"](*args))

    # NATTEN.
    for (cw, ch, kw, kh) in ((6, 6, 3, 3), (10, 10, 5, 5), (8, 4, 3, 1), (4, 8, 1, 5), (5, 7, 3, 5), (9, 9, 9, 9),
                             (1, 1, 1, 1), (7, 3, 2, 2)):
        n = cw * ch
        same_both(f"generate_natten({cw}, {ch}, {kw}, {kh})", ag.generate_natten(cw, ch, kw, kh),
                  ns["generate_natten"](canvas_w=cw, canvas_h=ch, kernel_w=kw, kernel_h=kh), Q=n)
        same_both(f"generate_morton_natten({cw}, {ch}, {kw}, {kh})", ag.generate_morton_natten(cw, ch, kw, kh),
                  ns["generate_morton_natten"](canvas_w=cw, canvas_h=ch, kernel_w=kw, kernel_h=kh), Q=min(100, n + 7))
    for (W, H, KW, KH, TW, TH) in ((6, 6, 3, 3, 2, 2), (8, 8, 3, 5, 4, 2), (10, 10, 5, 3, 5, 5), (4, 6, 3, 3, 2, 3),
                                   (12, 8, 7, 3, 3, 4), (3, 3, 1, 1, 1, 1)):
        same_both(f"generate_tiled_natten({W}, {H}, {KW}, {KH}, {TW}, {TH})", ag.generate_tiled_natten(W, H, KW, KH, TW, TH),
                  ns["generate_tiled_natten"](W=W, H=H, K_W=KW, K_H=KH, T_W=TW, T_H=TH), Q=W * H)
    codes = torch.arange(0, 5000, 7)
    for name in ("interleave_bits_32", "deinterleave_bits_32"):
        same_tensor(f"{name}", getattr(ag_natten, name)(codes), ns[name](codes))
        same_tensor(f"{name} (negative)", getattr(ag_natten, name)(-codes - 1), ns[name](-codes - 1))
        for value in (0, 1, 5, 12345, 2**20 + 3, -7):
            check(getattr(ag_natten, name)(value) == ns[name](value), f"{name}({value}) on a Python int")
    same_tensor("morton_encode", ag_natten.morton_encode(codes, codes.flip(0)), ns["morton_encode"](codes, codes.flip(0)))
    for got, want in zip(ns["morton_decode"](codes), ag_natten.morton_decode(codes)):
        same_tensor("morton_decode", want, got)
    same_tensor("morton_decode (negative)", torch.stack(ag_natten.morton_decode(-codes)),
                torch.stack(ns["morton_decode"](-codes)))

    # Sliding tile attention.
    for (canvas, kernel, tile, text) in (((8, 8), (4, 4), (2, 2), 0), ((8, 8), (6, 2), (2, 2), 10), ((6, 9), (3, 3), (3, 3), 20),
                                         ((4, 4), (4, 4), (1, 1), 3), ((9, 6), (3, 6), (3, 2), 7), ((10, 10), (10, 10), (5, 5), 0)):
        n = min(100, canvas[0] * canvas[1] + text + 3)
        same_both(f"generate_sta_mask_mod_2d({canvas}, {kernel}, {tile}, {text})",
                  ag.generate_sta_mask_mod_2d(canvas, kernel, tile, text),
                  ns["generate_sta_mask_mod_2d"](canvas_hw=canvas, kernel_hw=kernel, tile_hw=tile, text_seq_len=text), Q=n)
    same_both("generate_sta_mask_mod_2d default text", ag.generate_sta_mask_mod_2d((4, 4), (2, 2), (2, 2)),
              ns["generate_sta_mask_mod_2d"]((4, 4), (2, 2), (2, 2)), Q=20)
    for (canvas, kernel, tile, text) in (((4, 4, 4), (2, 2, 2), (2, 2, 2), 0), ((4, 4, 4), (4, 2, 2), (2, 2, 2), 9),
                                         ((2, 6, 6), (2, 3, 3), (1, 3, 3), 12), ((3, 4, 6), (3, 2, 6), (1, 2, 3), 4),
                                         ((4, 3, 3), (2, 3, 3), (2, 1, 1), 0)):
        n = min(100, canvas[0] * canvas[1] * canvas[2] + text + 3)
        same_both(f"generate_sta_mask_mod_3d({canvas}, {kernel}, {tile}, {text})",
                  ag.generate_sta_mask_mod_3d(canvas, kernel, tile, text),
                  ns["generate_sta_mask_mod_3d"](canvas_twh=canvas, kernel_twh=kernel, tile_twh=tile, text_seq_len=text), Q=n)
    for args in (((8, 7), (4, 4), (2, 2)), ((8, 8), (3, 4), (2, 2)), ((6, 8), (2, 3), (2, 2)), ((7, 8), (2, 2), (2, 2))):
        same_refusal(f"generate_sta_mask_mod_2d{args}", lambda: ag.generate_sta_mask_mod_2d(*args),
                     lambda: ns["generate_sta_mask_mod_2d"](*args))
    for args in (((3, 4, 4), (2, 2, 2), (2, 2, 2)), ((4, 4, 4), (3, 2, 2), (2, 2, 2)), ((4, 4, 5), (2, 2, 2), (2, 2, 2)),
                 ((4, 4, 4), (2, 2, 3), (2, 2, 2))):
        same_refusal(f"generate_sta_mask_mod_3d{args}", lambda: ag.generate_sta_mask_mod_3d(*args),
                     lambda: ns["generate_sta_mask_mod_3d"](*args))

    # Video sparse attention (reads the batch and the head).
    for trial in range(10):
        B, H = rng.randint(1, 3), rng.randint(1, 3)
        tile = rng.choice([1, 2, 4, 8, 16])
        q_tiles = rng.randint(1, 6)
        kv_tiles = rng.randint(1, 6)
        top_k = rng.randint(0, kv_tiles)
        g = torch.Generator().manual_seed(trial)
        topk = torch.stack([torch.randperm(kv_tiles, generator=g)[:top_k] for _ in range(B * H * q_tiles)]).reshape(
            B, H, q_tiles, top_k)
        sizes = torch.randint(0, tile + 1, (kv_tiles,), generator=g)
        Q, KV = min(100, q_tiles * tile), min(100, kv_tiles * tile)
        same_both(f"generate_vsa_mask_mod(t={tile}, k={top_k}) B={B} H={H}", ag.generate_vsa_mask_mod(topk, tile),
                  ns["generate_vsa_mask_mod"](topk_indices=topk, tile_numel=tile), B=B, H=H, Q=Q, KV=KV)
        same_both(f"generate_vsa_mask_mod(t={tile}, k={top_k}, sizes) B={B} H={H}",
                  ag.generate_vsa_mask_mod(topk, tile, sizes),
                  ns["generate_vsa_mask_mod"](topk, tile, variable_block_sizes=sizes), B=B, H=H, Q=Q, KV=KV)
        same_both(f"generate_vsa_padding_mask_mod(t={tile})", ag_vsa.generate_vsa_padding_mask_mod(sizes, tile),
                  ns["generate_vsa_padding_mask_mod"](variable_block_sizes=sizes, tile_numel=tile), B=B, H=H, Q=Q, KV=KV)
        if top_k:  # with no tiles chosen nothing is looked up
            same_mask(f"generate_vsa_mask_mod one batch too many (t={tile})", ag.generate_vsa_mask_mod(topk, tile),
                      ns["generate_vsa_mask_mod"](topk, tile), B=B + 1, H=H, Q=Q, KV=KV, fails=True)
    same_refusal("generate_vsa_mask_mod 3D indices", lambda: ag.generate_vsa_mask_mod(torch.zeros(1, 2, 3, dtype=torch.long), 4),
                 lambda: ns["generate_vsa_mask_mod"](torch.zeros(1, 2, 3, dtype=torch.long), 4))
    same_refusal("generate_vsa_mask_mod tile 0", lambda: ag.generate_vsa_mask_mod(torch.zeros(1, 1, 1, 1, dtype=torch.long), 0),
                 lambda: ns["generate_vsa_mask_mod"](torch.zeros(1, 1, 1, 1, dtype=torch.long), 0))
    same_refusal("generate_vsa_padding_mask_mod tile -1", lambda: ag_vsa.generate_vsa_padding_mask_mod(torch.ones(2), -1),
                 lambda: ns["generate_vsa_padding_mask_mod"](torch.ones(2), -1))


def main():
    loaded = {}
    for file in ("flex_attention.py", "masking_utils.py", "attn_gym_masks.py"):
        text, ns = load(file)
        loaded[file] = ns
        if file == "flex_attention.py":
            # block_mask.py runs after it in the same module (BlockMask, create_block_mask).
            # Its `hasseflow.block_counts` is the reader's native; here, torch's create_mask counts.
            ns["hasseflow"] = BlockCounts
            with open(os.path.join(LIBRARY, "block_mask.py")) as f:
                second = f.read().replace("import hasseflow\n", "")
            exec(compile(second, "block_mask.py", "exec"), ns)
        problems = subset_problems(text)
        check(not problems, f"{file} leaves the interpreter's subset: {'; '.join(problems)}")
    sections = [("flex_attention", lambda: check_flex(loaded["flex_attention.py"])),
                ("masking_utils", lambda: check_masking_utils(loaded["masking_utils.py"]))]
    try:
        import attn_gym.masks as ag
    except ImportError as e:
        check(False, f"attn_gym.masks cannot be imported ({e}): scripts/setup.sh installs attn-gym into the venv")
    else:
        sections.append(("attn_gym", lambda: check_attn_gym(loaded["attn_gym_masks.py"], ag, loaded["flex_attention.py"])))
    for name, run in sections:
        try:
            run()
        except Exception:  # noqa: BLE001 - an unexpected failure ends that library's checks, not the run
            check(False, f"{name}: the checks stopped on an unexpected exception:\n{traceback.format_exc()}")
    exit_with(TALLY)


if __name__ == "__main__":
    main()
