//! Issue 30's semantic reproducers for the mask_mod reader, in process: views that alias their
//! base, statements the reader skips, try/except ImportError, keyword arguments, Python values as
//! CPython has them, refusals that tell the truth. Each case of tests/data/mask_mod_semantics.json
//! ends as torch's exact mask (its rows, which tests/python/test_mask_mod_semantics.py checks are
//! what `create_mask` gives for the same text) or as a one-line refusal with a place and the words
//! given.

use hasseflow_core::interop::mask_mod::MaskMod;

/// The cases, shared with the Python test that runs them against torch: the reproducers, and
/// the cases of classes, types, exceptions and annotations (tests/data/mask_mod_semantics_types.json),
/// and of seeded random draws (tests/data/mask_mod_semantics_random.json).
fn cases() -> Vec<serde_json::Value> {
    let mut all = Vec::new();
    for name in ["mask_mod_semantics.json", "mask_mod_semantics_types.json", "mask_mod_semantics_random.json"] {
        let path = format!("{}/../../tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path} is not readable: {e}"));
        let cases: Vec<serde_json::Value> = serde_json::from_str(&text).expect("the cases are JSON");
        all.extend(cases);
    }
    all
}

#[test]
fn each_reproducer_is_torchs_mask_or_a_true_refusal() {
    let cases = cases();
    assert!(cases.len() >= 55, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let (name, text) = (case["name"].as_str().unwrap(), case["text"].as_str().unwrap());
        let got = MaskMod::parse(text).and_then(|m| m.to_mask(8)).map(|b| b.to_row_strings());
        let ok = match (&case["rows"], &got) {
            (serde_json::Value::Array(want), Ok(rows)) => {
                want.iter().map(|r| r.as_str().unwrap()).eq(rows.iter().map(String::as_str))
            }
            (serde_json::Value::Null, Err(e)) => {
                let e = e.to_string();
                e.contains(case["words"].as_str().unwrap()) && e.contains("line ")
            }
            _ => false,
        };
        if !ok {
            failures.push(format!("{name}: {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn message(text: &str) -> String {
    match MaskMod::parse(text).and_then(|m| m.to_mask(4)) {
        Ok(_) => panic!("accepted {text:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn refusals_claim_no_exception_python_would_not_raise() {
    let e = message("X = bin(3)\ndef mask_mod(b, h, q, k):\n    return q - k <= len(X)\n");
    assert!(e.contains("the builtin `bin` is not modelled") && !e.contains("NameError"), "{e}");
    let e = message(
        "import torch\nT = int | None\nA = tuple[str, int | None]\ndef mask_mod(b, h, q, k):\n    return q >= k + A\n",
    );
    assert!(e.contains("kept as an inert value") && !e.contains("TypeError"), "{e}");
    let e = message("S = {1, 2} | {3}\ndef mask_mod(b, h, q, k):\n    return q - k <= len(S)\n");
    assert!(e.contains("set operator `|` is not modelled") && !e.contains("list and list"), "{e}");
    let e = message("W = 2**63 - 4\ndef mask_mod(b, h, q, k):\n    return q - k <= W\n");
    assert!(e.contains("over 64 bits") && !e.contains("Error"), "{e}");
    let e =
        message("S = {'a', 'b', 'c'}\nW = len([x for x in S][0])\ndef mask_mod(b, h, q, k):\n    return q - k <= W\n");
    assert!(e.contains("iterating a set"), "{e}");
}

#[test]
fn python_values_are_cpythons() {
    // Each pair: an expression and CPython 3.11's value of it (small enough to be a window).
    let cases = [
        ("pow(3, 200, 7)", 2),
        ("pow(5, 3, -4)", -3),
        ("round(1250, -2) // 100", 12),
        ("round(1350, -2) // 100", 14),
        ("int('ff', 16) % 7", 3),
        ("int('0b101', 0)", 5),
        ("int(' -1_0 ') + 12", 2),
        ("int(2**53 + 1 > float(2**53))", 1),
        ("int(2**53 + 1 == 2.0**53)", 0),
        ("len('\\x41\\u00e9\\101\\0')", 4),
        ("list({27, 14, 10, 2})[0] % 5", 2),
        ("list({x for x in [27, 14, 10, 2]})[0] % 5", 2),
        ("list(set([-1, 7, 3]))[1] + 2", 1),
        ("len(__doc__)", 4),
    ];
    for (expr, want) in cases {
        let want: i64 = want;
        // Column 0 has its one key at row W + 20.
        let text = format!("\"\"\"Doc.\"\"\"\nW = {expr}\ndef mask_mod(b, h, q, k):\n    return q - k == W + 20\n");
        let rows = MaskMod::parse(&text).and_then(|m| m.to_mask(40)).map(|b| b.to_row_strings());
        let rows = rows.unwrap_or_else(|e| panic!("{expr}: {e}"));
        let got: Vec<usize> = (0..40).filter(|&r| rows[r].as_bytes()[0] == b'1').collect();
        assert_eq!(got, [(want + 20) as usize], "{expr}: expected {want}");
    }
}

#[test]
fn float_to_long_is_torchs_x86_conversion() {
    // torch.tensor([1e30, nan, -3e9]).long() is INT64_MIN, INT64_MIN, -3e9 on the CPU.
    let text = "import torch\nT = torch.tensor([1e30, float('nan'), -3e9]).long()\n\
                W = int((T[0] == -2**62 * 2) & (T[1] == T[0]) & (T[2] == -3000000000))\n\
                def mask_mod(b, h, q, k):\n    return q - k <= W\n";
    let rows = MaskMod::parse(text).and_then(|m| m.to_mask(3)).unwrap().to_row_strings();
    assert_eq!(rows, ["111", "111", ".11"]);
    let e = message(
        "import torch\nI = torch.tensor([1], dtype=torch.int8)\nT = torch.arange(4)[I]\ndef mask_mod(b, h, q, k):\n    return T[0] <= q\n",
    );
    assert!(e.contains("tensors used as indices must be long, int, byte or bool tensors"), "{e}");
}

#[test]
fn a_skipped_class_is_reported_as_skipped_not_undefined() {
    // A `str` mixed into an Enum is not modelled: the class's name is unavailable, with both
    // places, never a NameError.
    let e = message(
        "from enum import Enum\nclass Mode(str, Enum):\n    A = 'a'\n    B = 'b'\nW = len(Mode.B.value)\ndef mask_mod(b, h, q, k):\n    return q - k <= W\n",
    );
    assert!(e.contains("`Mode`, set by the skipped statement at line 2, column 1") && !e.contains("NameError"), "{e}");
}

#[test]
fn enums_are_modelled_as_cpython_builds_them() {
    // Each: the text between the class and the mask, and CPython 3.11's value of `W`.
    let cases = [
        ("class E(Enum):\n    A = 1\n    B = 2\nW = E.B.value + len(E)", 4),
        ("class E(IntEnum):\n    A = 1\n    B = 3\nW = E.A + E.B", 4),
        ("class E(Enum):\n    A = 2\n    B = 2\nW = int(E.B is E.A) + int(E(2) is E['B'])", 2),
        ("class E(Enum):\n    A = auto()\n    B = auto()\nW = sum(m.value for m in E)", 3),
        ("class E(int, Enum):\n    A = 3\nW = E.A - 1", 2),
        ("class E(Enum):\n    A = 1\n    def w(self):\n        return self.value + 1\nW = E.A.w()", 2),
        ("class E(IntEnum):\n    A = 1\nW = int(isinstance(E.A, int)) + int(type(E.A) is E) + int(E.A == 1)", 3),
        ("class E(Enum):\n    A = 1\nW = int(E.A == 1) + int(E.A != E.A) + 1", 1),
    ];
    for (body, want) in cases {
        let text = format!(
            "from enum import Enum, IntEnum, auto\n{body}\ndef mask_mod(b, h, q, k):\n    return (q - k <= W) & (k - q <= W)\n"
        );
        let m = MaskMod::parse(&text).and_then(|m| m.to_mask(8)).unwrap_or_else(|e| panic!("{text}: {e}"));
        let rows = m.to_row_strings();
        assert_eq!(rows[0].chars().filter(|&c| c == '1').count(), want + 1, "{text}: {rows:?}");
    }
}

#[test]
fn except_clauses_match_by_type() {
    // Each: a `try` statement and the width it must leave (CPython 3.11).
    let cases = [
        ("try:\n    W = [1][4]\nexcept KeyError:\n    W = 1\nexcept IndexError:\n    W = 2", 2),
        ("try:\n    W = {}[0]\nexcept (TypeError, LookupError) as e:\n    W = 3", 3),
        ("try:\n    raise ValueError('x')\nexcept Exception:\n    W = 1\nelse:\n    W = 5", 1),
        ("try:\n    W = 2\nexcept Exception:\n    W = 1\nelse:\n    W += 2\nfinally:\n    W += 1", 5),
        ("class Bad(KeyError):\n    pass\ntry:\n    raise Bad\nexcept LookupError:\n    W = 2", 2),
        (
            "try:\n    try:\n        W = 1 // 0\n    except ValueError:\n        W = 0\nexcept ArithmeticError:\n    W = 4",
            4,
        ),
    ];
    for (stmt, want) in cases {
        let text = format!("{stmt}\ndef mask_mod(b, h, q, k):\n    return (q - k <= W) & (k - q <= W)\n");
        let m = MaskMod::parse(&text).and_then(|m| m.to_mask(8)).unwrap_or_else(|e| panic!("{text}: {e}"));
        let rows = m.to_row_strings();
        assert_eq!(rows[0].chars().filter(|&c| c == '1').count(), want + 1, "{text}: {rows:?}");
    }
    // An exception no clause catches goes on: the module fails as Python's import does.
    let e = message("try:\n    W = [][0]\nexcept KeyError:\n    W = 1\ndef mask_mod(b, h, q, k):\n    return q >= k\n");
    assert!(e.contains("IndexError") && e.contains("line 2"), "{e}");
}

#[test]
fn annotations_of_typing_forms_never_refuse() {
    // Each annotation, on a parameter, a return and a module variable, is evaluated as CPython 3.11
    // evaluates it, and none of these raises there.
    let forms = [
        "int | None",
        "torch.Tensor | None",
        "tuple[str, int | None]",
        "dict[str, list[int]]",
        "Callable[..., bool]",
        "Callable[[int, int], bool] | None",
        "Optional[torch.Tensor]",
        "Union[int, float]",
        "ClassVar[int]",
        "'Undefined | None'",
        "type[ValueError] | None",
    ];
    for form in forms {
        let text = format!(
            "import torch\nfrom typing import Callable, ClassVar, Optional, Union\nX: {form} = None\n\
             def mask_mod(b: {form}, h, q, k) -> {form}:\n    return q >= k\n"
        );
        let rows = MaskMod::parse(&text).and_then(|m| m.to_mask(4)).map(|m| m.to_row_strings());
        assert_eq!(
            rows.as_deref().ok(),
            Some(&["1...", "11..", "111.", "1111"].map(String::from)[..]),
            "{form}: {rows:?}"
        );
    }
    // An annotation that raises in CPython 3.11 (and not in 3.14) is refused as not modelled.
    let e = message("def mask_mod(b, h, q, k: Undefined):\n    return q >= k\n");
    assert!(e.contains("this annotation raises") && e.contains("not modelled"), "{e}");
}
