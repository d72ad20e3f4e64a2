//! Unit tests of the importer.

use super::*;

fn mask(text: &str, n: usize) -> Vec<String> {
    MaskMod::parse(text).unwrap_or_else(|e| panic!("{text}: {e}")).to_mask(n).unwrap().to_row_strings()
}

fn refused(text: &str) -> String {
    match MaskMod::parse(text) {
        Ok(m) => panic!("accepted {text:?} as {m}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn common_shapes() {
    let causal = ["1...", "11..", "111.", "1111"];
    assert_eq!(mask("def causal(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n", 4), causal);
    assert_eq!(mask("causal = lambda b, h, q, k: q >= k\n", 4), causal);
    assert_eq!(mask("def f(b, h, q, k): return q >= k", 4), causal);
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
        mask("a = lambda b, h, q, k: q == k\nc = lambda b, h, q, k: k == 0\nm = or_masks(a, c)\n", 3),
        ["1..", "11.", "1.1"]
    );
    assert_eq!(
        mask("def f(b,h,q,k):\n    return (\n        (q // 2 == k // 2)\n        | (k == 0)\n    )\n", 4),
        ["11..", "11..", "1.11", "1.11"]
    );
    // Calls of the text's own functions, with shifted arguments.
    assert_eq!(
        mask("def c(b,h,q,k): return k <= q\ndef mask_mod(b,h,q,k): return c(b,h,q-1,k) & c(b,h,k+1,q)\n", 3),
        ["...", "1..", ".1."]
    );
    assert_eq!(mask("m = and_masks()\n", 2), ["11", "11"]);
    assert_eq!(mask("m = or_masks()\n", 2), ["..", ".."]);
}

#[test]
fn python_floor_semantics() {
    let m = MaskMod::parse("def f(b,h,q,k): return ((q - k) // 3 == -1) & ((q - k) % 3 == 2)").unwrap();
    assert!(m.eval(0, 1).unwrap());
    assert!(!m.eval(0, 3).unwrap());
    let m = MaskMod::parse("def f(b,h,q,k): return (q & 1) == (~k & 1)").unwrap();
    assert!(m.eval(1, 0).unwrap() && !m.eval(1, 1).unwrap());
}

#[test]
fn picks_mask_mod_else_the_last_function() {
    let m = MaskMod::parse(
        "def a(b,h,q,k): return q == k\ndef mask_mod(b,h,q,k): return q >= k\ndef z(b,h,q,k): return k == 0",
    )
    .unwrap();
    assert_eq!(m.name(), "mask_mod");
    let m = MaskMod::parse(
        "def a(b,h,q,k): return q == k\ndef z(b,h,q,k): return k == 0\ndef helper(device):\n    return 1\n",
    )
    .unwrap();
    assert_eq!(m.name(), "z");
    let m = MaskMod::parse("N = 5\nmask_mod = lambda b, h, q, k: q >= k").unwrap();
    assert_eq!(m.declared_n(), Some(5));
    assert_eq!(m.to_mask_sized(None).unwrap().n(), 5);
    assert_eq!(m.to_mask_sized(Some(3)).unwrap().n(), 3);
    let m = MaskMod::parse("mask_mod = lambda b, h, q, k: q >= k").unwrap();
    assert_eq!(m.to_mask_sized(None).unwrap_err(), MaskModError::NeedsSize);
}

#[test]
fn refusals_name_the_construct_and_place() {
    let e = refused("MASK = 1\ndef f(b, h, q, k):\n    return MASK[q, k]\n");
    assert!(e.starts_with("line 3, column 12:") && e.contains("lookup `MASK[...]`"), "{e}");
    let e = refused("import torch\ndef f(b, h, q, k):\n    return torch.where(q > k, True, False)\n");
    assert!(e.starts_with("line 3, column 12:") && e.contains("call `torch.where(...)`"), "{e}");
    assert!(refused("def f(b,h,q,k): return (q > k) and (k > 0)").contains("`and` is not supported"));
    assert!(refused("def f(b,h,q,k): return not (q > k)").contains("`not`"));
    assert!(refused("def f(b,h,q,k): return 0 <= k < q").contains("chained comparison"));
    assert!(refused("def f(b,h,q,k): return k <= q & (q < 3)").contains("mixes a boolean and an integer"));
    assert!(refused("def f(b,h,q,k): return q - k").contains("returns an integer"));
    assert!(refused("def f(b,h,q,k): return h == 0").contains("head argument `h`"));
    assert!(refused("def f(b,h,q,k):\n    if q > k:\n        return True\n    return False\n").contains("`if`"));
    assert!(refused("for i in range(3):\n    pass\ndef f(b,h,q,k): return q >= k").contains("`for` loop"));
    assert!(refused("def f(b,h,q): return q >= 0").contains("takes 3 arguments"));
    assert!(refused("def f(b,h,q,k): return q >= W").contains("`W` is not defined"));
    assert!(refused("W = 2\nW = 3\ndef f(b,h,q,k): return q - k < W").contains("bound more than once"));
    assert!(refused("def f(b,h,q,k): return f(b,h,q,k)").contains("recursion"));
    assert!(refused("def f(b,h,q,k): return (q / 2) >= k").contains("true division"));
    assert!(refused("def f(b,h,q,k): return q >= len(k)").contains("call `len(...)`"));
    assert!(refused("def f(b,h,q,k): return q >= k if q else k").contains("conditional"));
    assert!(
        refused("def outer(w):\n    def inner(b,h,q,k):\n        return q - k < w\n    return inner\nm = outer(3)\n")
            .contains("factory")
    );
    assert!(refused("x = 1\n").contains("no mask function"));
    assert!(refused("m = lambda b, h, q, k: True").contains("depends on neither"));
    assert!(refused("def f(b,h,q,k): return ~(1 < 2) & (q >= k)").contains("constant boolean"));
    assert!(refused("def f(b,h,q,k): return (q >= k").contains("unbalanced"));
    assert!(refused("W = 99999999999999999999\n").contains("64 bits"));
    let e = MaskMod::parse("def f(b,h,q,k): return (q // (k - 1)) >= 0").unwrap().to_mask(3).unwrap_err();
    assert_eq!(e.to_string(), "at q_idx = 0, kv_idx = 1: integer division by zero");
}

#[test]
fn detection() {
    assert!(is_mask_mod(b"# a mask\ndef f(b,h,q,k): return q >= k\n"));
    assert!(is_mask_mod(b"m = lambda b, h, q, k: q >= k"));
    assert!(!is_mask_mod(b"{\"format\": \"def \"}"));
    assert!(!is_mask_mod(b"1.\n11\n"));
    assert!(!is_mask_mod(&[0x93, b'N', b'U', b'M', b'P', b'Y']));
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = crate::rng::SplitMix64::new(7);
    let alphabet = b"def lambda(b,h,q,k):return&|~=<>!+-*/%0123 \n\t#\"'[].xNW_";
    for _ in 0..3000 {
        let len = (rng.next_u64() % 80) as usize;
        let text: String =
            (0..len).map(|_| alphabet[(rng.next_u64() % alphabet.len() as u64) as usize] as char).collect();
        if let Ok(m) = MaskMod::parse(&text) {
            let _ = m.to_mask(4);
        }
    }
}
