//! Unit tests of the mask_mod interpreter. The oracle for real texts is torch itself
//! (tests/python/test_mask_mod_*.py); these pin Python semantics, refusals, limits, and that the
//! row evaluator's interval analysis equals cell-by-cell evaluation.

use super::*;

fn mask(text: &str, n: usize) -> Vec<String> {
    MaskMod::parse(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .to_mask(n)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .to_row_strings()
}

fn refused(text: &str) -> String {
    match MaskMod::parse(text).and_then(|m| m.to_mask(4).map(|_| m)) {
        Ok(m) => panic!("accepted {text:?} as {m}"),
        Err(e) => e.to_string(),
    }
}

const CAUSAL: [&str; 4] = ["1...", "11..", "111.", "1111"];

#[test]
fn common_shapes() {
    assert_eq!(mask("def causal(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n", 4), CAUSAL);
    assert_eq!(mask("causal = lambda b, h, q, k: q >= k\n", 4), CAUSAL);
    assert_eq!(mask("def f(b, h, q, k): return q >= k", 4), CAUSAL);
    assert_eq!(
        mask(
            "import torch\nfrom torch.nn.attention.flex_attention import and_masks\n\nWINDOW = 2\n\n\
             def causal(b, h, q_idx, kv_idx):\n    \"\"\"Causal.\"\"\"\n    return q_idx >= kv_idx\n\n\
             def window(b, h, q_idx, kv_idx):\n    diff = q_idx - kv_idx\n    return diff < WINDOW\n\n\
             mask_mod = and_masks(causal, window)\n\nif __name__ == \"__main__\":\n    print(torch.zeros(3))\n",
            4
        ),
        ["1...", "11..", ".11.", "..11"]
    );
    assert_eq!(
        mask(
            "from torch.nn.attention.flex_attention import or_masks\na = lambda b, h, q, k: q == k\nc = lambda b, h, q, k: k == 0\nm = or_masks(a, c)\n",
            3
        ),
        ["1..", "11.", "1.1"]
    );
    assert_eq!(
        mask("def c(b,h,q,k): return k <= q\ndef mask_mod(b,h,q,k): return c(b,h,q-1,k) & c(b,h,k+1,q)\n", 3),
        ["...", "1..", ".1."]
    );
}

#[test]
fn factories_closures_partial_and_module_code() {
    let text = "import torch\nfrom functools import partial\ntorch.set_default_device('cuda')\n\
        def generate_sliding_window(window_size: int):\n    def sliding_window(b, h, q_idx, kv_idx):\n        \
        return (q_idx >= kv_idx) & (q_idx - kv_idx <= window_size)\n    sliding_window.__name__ = f'sw_{window_size}'\n    \
        return sliding_window\n\nimport numpy as np\nbuffer = np.zeros(3)\n\n\
        def band(b, h, q_idx, kv_idx, width=1):\n    return (q_idx - kv_idx).abs() <= width\n\n\
        wide = partial(band, width=2)\nmask_mod = generate_sliding_window(window_size=1)\n";
    assert_eq!(mask(text, 4), ["1...", "11..", ".11.", "..11"]);
    let m = MaskMod::parse(text).unwrap();
    let r = m.report();
    assert_eq!(r.skipped.len(), 1, "{r:?}");
    assert!(r.skipped[0].2.contains("numpy.zeros") && r.skipped[0].0 == 11, "{r:?}");
    assert!(!r.uses_batch && !r.uses_head);
    let wide = text.replace("mask_mod = generate_sliding_window(window_size=1)\n", "");
    assert_eq!(mask(&wide, 4), ["111.", "1111", "1111", ".111"]);
}

#[test]
fn module_level_tensors_and_lookups() {
    let text = "import torch\nlengths = [3, 1, 2]\n\
        doc = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))\n\
        offsets = torch.cumsum(torch.tensor([0] + lengths), dim=0)\n\
        def mask_mod(b, h, q_idx, kv_idx):\n    same = doc[q_idx] == doc[kv_idx]\n    \
        start = offsets[doc[q_idx]]\n    return same & (kv_idx <= q_idx) & (kv_idx >= start)\n";
    assert_eq!(mask(text, 6), ["1.....", "11....", "111...", "...1..", "....1.", "....11"]);
    let table = "import torch\nB = 2\nblocks = torch.zeros(2, 2, dtype=torch.bool)\nblocks[0, 0] = True\n\
        blocks[1, :] = True\ndef mask_mod(b, h, q, kv):\n    return blocks[q // B, kv // B]\n";
    assert_eq!(mask(table, 4), ["11..", "11..", "1111", "1111"]);
    let search = "import torch\nends = torch.tensor([2, 5])\ndef mask_mod(b, h, q, kv):\n    \
        return torch.bucketize(q, ends, right=True) == torch.bucketize(kv, ends, right=True)\n";
    assert_eq!(mask(search, 6), ["11....", "11....", "..111.", "..111.", "..111.", ".....1"]);
}

#[test]
fn batch_and_head_pick_the_mask_and_are_reported() {
    let text = "import torch\nwindows = torch.tensor([1, 3])\ndef mask_mod(b, h, q, kv):\n    \
        return (kv <= q) & (q - kv < windows[h])\n";
    let m = MaskMod::parse(text).unwrap();
    assert!(m.report().uses_head && !m.report().uses_batch);
    assert_eq!(m.to_mask_at(4, 0, 0).unwrap().to_row_strings(), ["1...", ".1..", "..1.", "...1"]);
    assert_eq!(m.to_mask_at(4, 0, 1).unwrap().to_row_strings(), ["1...", "11..", "111.", ".111"]);
    let e = m.to_mask_at(4, 0, 2).unwrap_err().to_string();
    assert!(e.contains("index out of range"), "{e}");
}

#[test]
fn python_and_torch_semantics() {
    // Floor division and modulo on negatives, as Python and torch's integer tensors.
    let m = MaskMod::parse("def f(b,h,q,k): return ((q - k) // 3 == -1) & ((q - k) % 3 == 2)").unwrap();
    assert!(m.eval(0, 1).unwrap());
    assert!(!m.eval(0, 3).unwrap());
    // fmod keeps the dividend's sign.
    assert_eq!(mask("import torch\ndef f(b,h,q,k): return torch.fmod(q - k, 2) == -1", 3), [".1.", "..1", "..."]);
    // Integer true division is float32, then compared.
    assert_eq!(mask("def f(b,h,q,k): return q / 2 >= k", 4), ["1...", "1...", "11..", "11.."]);
    // A float constant anywhere, and 1e-5.
    assert_eq!(
        mask("EPS = 1e-5\nSCALE = 0.5\ndef f(b,h,q,k): return q * SCALE + EPS >= k * SCALE", 3),
        ["1..", "11.", "111"]
    );
    // Conditionals and `if` on constants; helpers returning tuples.
    let text = "W = 4\nCAUSAL = True\nwin = W // 2 if W > 2 else 1\n\
        def coords(i):\n    return i // 2, i % 2\n\
        def mask_mod(b, h, q, k):\n    qr, qc = coords(q)\n    kr, kc = coords(k)\n    \
        if CAUSAL:\n        return (qr == kr) & (k <= q)\n    else:\n        return qr == kr\n";
    assert_eq!(mask(text, 4), ["1...", "11..", "..1.", "..11"]);
    // clamp, minimum/maximum, where, abs forms.
    assert_eq!(
        mask("import torch\ndef f(b,h,q,k): return torch.where(k <= q, (q - k).clamp(max=1) == 1, abs(q - k) == 1)", 3),
        [".1.", "1.1", "11."]
    );
    assert_eq!(
        mask("import torch\ndef f(b,h,q,k): return torch.minimum(q, k) == torch.maximum(q, k).abs() - 1", 3),
        [".1.", "1.1", ".1."]
    );
    // Shifts and bitwise on constants and indices.
    assert_eq!(
        mask("S = 1 << 1\ndef f(b,h,q,k): return (q >> 1) == (k >> 1) | (k < S - 1)", 4),
        [".1..", ".1..", "1.11", "1.11"]
    );
    // ~True is -2 in Python: torch's create_mask refuses the int mask, and so does hasseflow.
    assert!(refused("def f(b,h,q,k): return ~(1 < 2) & (q >= k)").contains("returns a torch.int64"));
}

#[test]
fn refusals_name_the_construct_and_place() {
    let e = refused("def f(b,h,q,k):\n    if q > k:\n        return True\n    return False\n");
    assert!(e.starts_with("line 2, column 8:") && e.contains("data-dependent control flow"), "{e}");
    assert!(refused("def f(b,h,q,k): return (q > k) and (k > 0)").contains("data-dependent"));
    assert!(refused("def f(b,h,q,k): return 0 <= k < q").contains("data-dependent"));
    assert!(refused("def f(b,h,q,k): return min(q, k) == 0").contains("data-dependent"));
    assert!(refused("def f(b,h,q,k): return q - k").contains("returns a torch.int64"));
    assert!(refused("def f(b,h,q): return q >= 0").contains("no mask function"));
    assert!(refused("def f(b,h,q,k): return q >= W").contains("`W` is not defined"));
    assert!(refused("def f(b,h,q,k): return f(b,h,q,k)").contains("recursion"));
    assert!(refused("x = 1\n").contains("no mask function"));
    assert!(refused("m = lambda b, h, q, k: True").contains("depends on neither"));
    assert!(refused("def f(b,h,q,k): return (q >= k").contains("never closed"));
    let e = refused("import numpy as np\nM = np.ones((4, 4))\ndef f(b,h,q,k): return M[q, k] > 0\n");
    assert!(e.contains("line 2") && e.contains("np.ones") || e.contains("numpy"), "{e}");
    let e = refused("W = 99999999999999999999\ndef f(b,h,q,k): return q - k < W");
    assert!(e.contains("line 1, column 5: a 20-digit integer literal is over 64 bits"), "{e}");
    let e = MaskMod::parse("def f(b,h,q,k): return (q // (k - 1)) >= 0").unwrap().to_mask(3).unwrap_err();
    assert_eq!(e.to_string(), "line 1, column 25: ZeroDivisionError (RuntimeError) (at q_idx = 0, kv_idx = 1)");
    // torch evaluates both branches of where: a division by zero in the unused one still raises.
    let e = MaskMod::parse("import torch\ndef f(b,h,q,k): return torch.where(k > 0, q // k > 0, q >= 0)")
        .unwrap()
        .to_mask(3)
        .unwrap_err();
    assert!(e.to_string().contains("ZeroDivisionError (RuntimeError)"), "{e}");
    // Sizes: a declared N out of range, uncomputable, or missing.
    let size = |t: &str| MaskMod::parse(t).unwrap().to_mask_sized(None).unwrap_err().to_string();
    assert!(size("N = 10**18\nm = lambda b,h,q,k: q >= k").contains("n = 1000000000000000000 is out of range"));
    assert!(size("N = -1\nm = lambda b,h,q,k: q >= k").contains("n = -1 is out of range"));
    assert!(
        refused("N = 4 // 0\nm = lambda b,h,q,k: q >= k")
            .contains("line 1, column 5: integer division or modulo by zero")
    );
    assert_eq!(size("m = lambda b,h,q,k: q >= k"), MaskModError::NeedsSize.to_string());
    // A long literal is not echoed in full.
    let long = format!("W = 1{}\nm = lambda b,h,q,k: q - k < W", "0".repeat(100_000));
    let e = refused(&long);
    assert!(e.len() < 260 && e.contains("100001-digit"), "{}", &e[..e.len().min(300)]);
}

#[test]
fn python_text_forms_are_read_as_python_reads_them() {
    let body = "def mask_mod(b, h, q, k):\n    return q >= k\n";
    assert_eq!(mask(&format!("\u{feff}{body}"), 4), CAUSAL);
    assert_eq!(mask(&body.replace('\n', "\r\n"), 4), CAUSAL);
    assert_eq!(mask(&body.replace('\n', "\r"), 4), CAUSAL);
    assert_eq!(mask("def mask_mod(b, h, q, k):\r\n    return (q >= k) & \\\r\n        (k >= 0)\r\n", 4), CAUSAL);
    assert_eq!(mask("def\tmask_mod(b, h, q, k):\n\treturn q >= k\n", 4), CAUSAL);
    assert_eq!(mask("def mask_mod(b, h, q, k):\n\x0c    return q >= k\n", 4), CAUSAL);
    assert_eq!(mask("def f(b, h, q, k):\n    return q >= k\nmask_mod = f\n", 4), CAUSAL);
    assert!(is_mask_mod(b"def\tmask_mod(b, h, q, k):\n\treturn q >= k\n"));
    assert!(is_mask_mod(b"from attn_gym.masks import causal_mask\nmask_mod = causal_mask\n"));
    // Words are runs of ASCII letters, digits and `_` and of other characters than ASCII: a
    // keyword glued to a non-ASCII letter (an identifier such as `ídef`) is no keyword.
    assert!(is_mask_mod("# Maske für Dokumente\ndef f(b, h, q, k):\n    return q >= k\n".as_bytes()));
    assert!(!is_mask_mod("ídef λclass = 1\n".as_bytes()));
    assert!(!is_mask_mod(b"definition = 1\nclassic = 2\n"));
    // Python folds identifiers by NFKC: the fullwidth W is W.
    assert_eq!(
        mask("W = 1\n\u{ff37} = 3\ndef f(b,h,q,k): return (k <= q) & (q - k < W)", 4),
        ["1...", "11..", "111.", ".111"]
    );
    // A syntax error in a class body is Python's SyntaxError at import (the class is not skipped);
    // a class the reader does not model (a body with `yield`, type parameters) is a skipped
    // statement, and a mask that does not read it is read.
    let body = "def mask_mod(b, h, q, k):\n    return q >= k\n";
    let e = refused(&format!("class P:\n    @property\n    x = 1\n{body}"));
    assert!(e.contains("line 3, column 5: invalid syntax"), "{e}");
    assert_eq!(mask(&format!("class A[T]:\n    x = 1\n{body}"), 4), CAUSAL);
    assert_eq!(mask(&format!("class A:\n    def f(self):\n        yield 1\n{body}"), 4), CAUSAL);
    // Mixed tabs and spaces that change meaning with the tab width: TabError, as in Python.
    assert!(refused("def f(b,h,q,k):\n        x = 1\n\treturn q >= k\n").contains("TabError"));
}

#[test]
fn library_masks_import() {
    let m = mask(
        "from attn_gym.masks import generate_sliding_window\nmask_mod = generate_sliding_window(window_size=1)\n",
        3,
    );
    assert_eq!(m, ["1..", "11.", ".11"]);
    let m = mask(
        "from transformers.masking_utils import and_masks, causal_mask_function, sliding_window_overlay\n\
         mask_mod = and_masks(causal_mask_function, sliding_window_overlay(2))\n",
        4,
    );
    assert_eq!(m, ["1...", "11..", ".11.", "..11"]);
    assert_eq!(mask("from attn_gym.masks import causal_mask\n", 3), ["1..", "11.", "111"]);
    assert!(
        refused("from attn_gym.masks import no_such_mask\nmask_mod = no_such_mask\n")
            .contains("not in hasseflow's table")
    );
}

#[test]
fn limits_refuse_hostile_text_in_bounded_time() {
    let deep = format!("def f(b,h,q,k): return {}q >= k{}", "(".repeat(3000), ")".repeat(3000));
    assert!(refused(&deep).contains("too many nested parentheses"));
    let chain = format!("def f(b,h,q,k): return q >= k{}", " + 0".repeat(12_196));
    assert!(MaskMod::parse(&chain).is_ok() || refused(&chain).contains("over"));
    let mut consts = String::from("c0 = 1\n");
    for i in 1..4515 {
        consts.push_str(&format!("c{i} = c{} + 1\n", i - 1));
    }
    consts.push_str("def f(b,h,q,k): return k <= q - c4514 + 4515\n");
    assert_eq!(MaskMod::parse(&consts).unwrap().to_mask(2).unwrap().to_row_strings(), ["1.", "11"]);
    let mut helpers = String::from("def g0(x): return x\n");
    for i in 1..4234 {
        helpers.push_str(&format!("def g{i}(x): return g{}(x)\n", i - 1));
    }
    helpers.push_str("def f(b,h,q,k): return g4233(q) >= k\n");
    assert!(refused(&helpers).contains("recursion"));
    let mut doubling = String::from("def f(b,h,q,k):\n    x0 = q\n");
    for i in 1..40 {
        doubling.push_str(&format!("    x{i} = x{} + x{}\n", i - 1, i - 1));
    }
    doubling.push_str("    return x39 >= k\n");
    assert!(MaskMod::parse(&doubling).is_ok());
    let mut twice = String::from("def g0(x): return x\n");
    for i in 1..31 {
        twice.push_str(&format!("def g{i}(x): return g{}(x) + g{}(x)\n", i - 1, i - 1));
    }
    twice.push_str("def f(b,h,q,k): return g30(q) >= k\n");
    // 2^30 calls: the step limit stops it (crates/core/tests/fuzz_mask_mod.rs times such texts).
    let e = refused(&twice);
    assert!(e.contains("steps") || e.contains("over 200000 tensor operations"), "{e}");
    assert!(refused("def g(x): return g(x)\ndef f(b,h,q,k): return g(q) >= k").contains("recursion"));
    assert!(refused("while True:\n    pass\nm = lambda b,h,q,k: q >= k").contains("steps"));
    assert!(refused("import torch\nt = torch.zeros(100000, 100000)\nm = lambda b,h,q,k: q >= k").contains("limit"));
    let big = format!("# {}\nm = lambda b,h,q,k: q >= k", "x".repeat(MAX_TEXT_BYTES));
    assert!(refused(&big).contains("over the limit"));
}

/// Random programs: the row evaluator's interval analysis equals evaluating every cell.
#[test]
fn interval_rows_equal_cell_by_cell_evaluation() {
    let mut rng = crate::rng::SplitMix64::new(11);
    let mut pick = |k: u64| rng.next_u64() % k;
    // The hints' own stream, so that the programs stay those of the seed.
    let mut hints = crate::rng::SplitMix64::new(12);
    let mut checked = 0;
    for case in 0..300 {
        fn int_expr(p: &mut dyn FnMut(u64) -> u64, d: u32) -> String {
            if d == 0 || p(4) == 0 {
                return ["q", "k", "q", "k", "3", "W", "doc[q]", "doc[k]", "starts[doc[q]]"][p(9) as usize].to_string();
            }
            let a = int_expr(p, d - 1);
            match p(10) {
                0 => format!("({a} + {})", int_expr(p, d - 1)),
                1 => format!("({a} - {})", int_expr(p, d - 1)),
                2 => format!("({a} * {})", p(4)),
                3 => format!("({a} // {})", 1 + p(5)),
                4 => format!("({a} % {})", 1 + p(5)),
                5 => format!("torch.abs({a} + q * 0)"),
                6 => format!("({a} + k * 0).clamp(min=0, max={})", p(20)),
                7 => format!("torch.minimum({a} + q * 0, {} + k * 0)", int_expr(p, d - 1)),
                8 => format!("({a} >> 1)"),
                _ => format!("({a} & 7)"),
            }
        }
        fn bool_expr(p: &mut dyn FnMut(u64) -> u64, d: u32) -> String {
            if d == 0 || p(3) == 0 {
                let ops = ["<", "<=", ">", ">=", "==", "!="];
                return format!("({} {} {})", int_expr(p, 2), ops[p(6) as usize], int_expr(p, 2));
            }
            match p(5) {
                0 => format!("({} & {})", bool_expr(p, d - 1), bool_expr(p, d - 1)),
                1 => format!("({} | {})", bool_expr(p, d - 1), bool_expr(p, d - 1)),
                2 => format!("(~{})", bool_expr(p, d - 1)),
                3 => format!("torch.where({}, {}, {})", bool_expr(p, d - 1), bool_expr(p, d - 1), bool_expr(p, d - 1)),
                _ => format!("({} ^ {})", bool_expr(p, d - 1), bool_expr(p, d - 1)),
            }
        }
        let body = bool_expr(&mut pick, 3);
        let n = 20 + pick(140);
        let lens: Vec<String> = (0..1 + pick(6)).map(|_| (1 + pick(n / 2 + 1)).to_string()).collect();
        let text = format!(
            "import torch\nW = {}\nlengths = torch.tensor([{}])\ndoc = torch.repeat_interleave(torch.arange(len(lengths)), lengths)\n\
             starts = torch.cumsum(lengths, 0) - lengths\ndef mask_mod(b, h, q, k):\n    return ({body}) & (k >= 0)\n",
            pick(9),
            lens.join(", ")
        );
        let m = MaskMod::parse(&text).unwrap_or_else(|e| panic!("case {case}: {e}\n{text}"));
        let total: u64 = lens.iter().map(|l| l.parse::<u64>().unwrap()).sum();
        let n = n.min(total);
        let mut ev = trace::RowEval::new(&m.graph, m.root, 0, 0).unwrap();
        let (mut fast, mut slow, mut hinted) = (Vec::new(), Vec::new(), Vec::new());
        let mut before: Vec<[u64; 2]> = Vec::new();
        for q in 0..n {
            let a = ev.row(q, n, usize::MAX, &mut fast).map(|()| fast.clone());
            let b = ev.row_cellwise(q, n, &mut slow).map(|()| slow.clone());
            assert_eq!(a, b, "case {case} row {q}:\n{text}");
            // Cut where the row before it, or an unrelated row, has its intervals: the same row.
            let mut cut = |k: u64| hints.next_u64() % k;
            let unrelated = [[cut(n), n - 1], [0, cut(n) / 2]];
            let hint: &[[u64; 2]] = if cut(2) == 0 { &before } else { &unrelated[..1 + cut(2) as usize] };
            let c = ev.row_after(q, n, usize::MAX, hint, &mut hinted).map(|()| hinted.clone());
            assert_eq!(c, b, "case {case} row {q}, cut at {hint:?}:\n{text}");
            before = slow.clone();
        }
        checked += 1;
    }
    assert_eq!(checked, 300);
}

#[test]
fn detection() {
    assert!(is_mask_mod(b"# a mask\ndef f(b,h,q,k): return q >= k\n"));
    assert!(is_mask_mod(b"m = lambda b, h, q, k: q >= k"));
    assert!(!is_mask_mod(b"{\"format\": \"def \"}"));
    assert!(is_mask_mod(b"class Causal:\n    __call__ = staticmethod(max)\nmask_mod = Causal()\n"));
    assert!(!is_mask_mod(b"1.\n11\n"));
    assert!(!is_mask_mod(&[0x93, b'N', b'U', b'M', b'P', b'Y']));
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = crate::rng::SplitMix64::new(7);
    let alphabet = b"def lambda(b,h,q,k):return&|~=<>!+-*/%0123 \n\t#\"'[].xNW_torch.aw";
    for _ in 0..3000 {
        let len = (rng.next_u64() % 80) as usize;
        let text: String =
            (0..len).map(|_| alphabet[(rng.next_u64() % alphabet.len() as u64) as usize] as char).collect();
        if let Ok(m) = MaskMod::parse(&text) {
            let _ = m.to_mask(4);
        }
    }
}

/// Above the dense limit, the mask_mod's rows on the structured engine give the same report as
/// the closed form of the same documents (a causal full layer with packed documents).
#[test]
fn structured_rows_equal_the_closed_form_of_the_same_documents() {
    use crate::pattern::{LayerKind, Overlays};
    use crate::reach::{ReachOptions, ReachStack, RuleLayer, StructuredLayer};
    let lengths = [5000u64, 1, 3191, 7000, 2000, 1192];
    let n: u64 = lengths.iter().sum();
    let text = format!(
        "import torch\nlengths = torch.tensor({lengths:?})\nends = torch.cumsum(lengths, 0)\n\
         def mask_mod(b, h, q, kv):\n    same = torch.searchsorted(ends, q, right=True) == torch.searchsorted(ends, kv, right=True)\n    \
         return same & (kv <= q) & (q - kv < 3000)\n"
    );
    let m = MaskMod::parse(&text).unwrap();
    let got = m.reach(n, 0, 0, Some(4)).unwrap();
    let overlays = Overlays { docs: lengths.to_vec(), ..Overlays::default() };
    let layer = StructuredLayer::Rule(RuleLayer::new(LayerKind::Sliding { window: 3000 }, true, overlays));
    let want = ReachStack::new(n, vec![layer; 4], Vec::new()).unwrap().run(&ReachOptions::default()).unwrap();
    assert_eq!(got.growth, want.growth);
    assert_eq!((got.limit_cells, got.full_at), (want.limit_cells, want.full_at));
    assert_eq!(got.limit.classes, want.limit.classes);
    assert_eq!(
        got.limit.hasse.map(|h| (h.node_count, h.edge_count)),
        want.limit.hasse.map(|h| (h.node_count, h.edge_count))
    );
    assert_eq!(
        got.layers.iter().map(|l| l.lookback).collect::<Vec<_>>(),
        want.layers.iter().map(|l| l.lookback).collect::<Vec<_>>()
    );
}

#[test]
fn classes_configs_and_dataclasses() {
    let text = "from dataclasses import dataclass, field\nfrom typing import NamedTuple\n\
        @dataclass\nclass Cfg:\n    window: int = 2\n    sinks: int = field(default=1)\n\n\
        class Spec(NamedTuple):\n    causal: bool = True\n\n\
        class Masks:\n    SCALE = 1\n    def __init__(self, cfg, spec):\n        self.cfg = cfg\n        self.spec = spec\n    \
        @staticmethod\n    def causal(b, h, q, k):\n        return k <= q\n    \
        def local(self, b, h, q, k):\n        near = q - k < self.cfg.window * Masks.SCALE\n        \
        return (near | (k < self.cfg.sinks)) & Masks.causal(b, h, q, k)\n\n\
        masks = Masks(Cfg(window=2), Spec())\ndef mask_mod(b, h, q, k):\n    return masks.local(b, h, q, k)\n";
    assert_eq!(mask(text, 5), ["1....", "11...", "111..", "1.11.", "1..11"]);
    assert!(
        refused("class A:\n    pass\nm = A(3)\ndef f(b,h,q,k): return q >= k + m\n").contains("takes no arguments")
    );
}

#[test]
fn cell_errors_name_the_operation_that_raised() {
    let e = MaskMod::parse("import torch\nt = torch.arange(3)\ndef f(b, h, q, k):\n    return t[q] >= t[k]\n")
        .unwrap()
        .to_mask(4)
        .unwrap_err()
        .to_string();
    assert_eq!(e, "line 4, column 21: index out of range in a tensor lookup (IndexError) (at q_idx = 0, kv_idx = 3)");
}
