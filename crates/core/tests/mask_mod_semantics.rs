//! Issue 30's semantic reproducers for the mask_mod reader, in process: views that alias their
//! base, statements the reader skips, try/except ImportError, keyword arguments, Python values as
//! CPython has them, refusals that tell the truth. Each case ends as torch's exact mask (the rows
//! below are what `create_mask` gives for the same text; tests/python/test_mask_mod_semantics.py
//! runs the same texts against torch itself) or as a one-line refusal with a place and the words
//! given.

use hasseflow_core::interop::mask_mod::MaskMod;

enum Expect {
    Rows(&'static [&'static str]),
    Refused(&'static str),
}

const CASES: &[(&str, &str, Expect)] = &[
    (
        "packed documents by fill_ on slices",
        "import torch\nN = 8\n\nDOC = torch.zeros(N, dtype=torch.long)\nfor i, (s, e) in enumerate([(0, 3), (3, 5), (5, 8)]):\n    DOC[s:e].fill_(i)\ndef mask_mod(b, h, q, k):\n    return DOC[q] == DOC[k]\n",
        Expect::Rows(&["111.....", "111.....", "111.....", "...11...", "...11...", ".....111", ".....111", ".....111"]),
    ),
    (
        "a tail view updated by +=",
        "import torch\nN = 8\n\nDOC = torch.zeros(N, dtype=torch.long)\ntail = DOC[4:]\ntail += 1\ndef mask_mod(b, h, q, k):\n    return DOC[q] == DOC[k]\n",
        Expect::Rows(&["1111....", "1111....", "1111....", "1111....", "....1111", "....1111", "....1111", "....1111"]),
    ),
    (
        "item assignment through .view()",
        "import torch\nN = 8\n\nDOC = torch.zeros(N, dtype=torch.long)\nDOC.view(2, 4)[1] = 1\ndef mask_mod(b, h, q, k):\n    return (DOC[q] == DOC[k]) & (k <= q)\n",
        Expect::Rows(&["1.......", "11......", "111.....", "1111....", "....1...", "....11..", "....111.", "....1111"]),
    ),
    (
        "a write to the base is seen by an earlier view",
        "import torch\nN = 8\n\nDOC = torch.zeros(N, dtype=torch.long)\nhead = DOC[:4]\nDOC[2] = 7\nOK = int(head[2])\ndef mask_mod(b, h, q, k):\n    return (q - k).abs() <= OK % 3\n",
        Expect::Rows(&["11......", "111.....", ".111....", "..111...", "...111..", "....111.", ".....111", "......11"]),
    ),
    (
        "item assignment on a view of a view",
        "import torch\nN = 8\n\nDOC = torch.arange(N)\nv = DOC[2:][1:]\nv[0] = 0\ndef mask_mod(b, h, q, k):\n    return DOC[k] <= q\n",
        Expect::Rows(&["1..1....", "11.1....", "1111....", "1111....", "11111...", "111111..", "1111111.", "11111111"]),
    ),
    (
        "rows of a 2-d table written while iterating",
        "import torch\nN = 8\n\nT = torch.zeros(2, N, dtype=torch.long)\nfor r, row in enumerate(T):\n    row[r * 3:] = r + 1\ndef mask_mod(b, h, q, k):\n    return T[0, k] >= T[1, q]\n",
        Expect::Rows(&["11111111", "11111111", "11111111", "........", "........", "........", "........", "........"]),
    ),
    (
        "zero_ and masked_fill_ on views",
        "import torch\nN = 8\n\nDOC = torch.ones(N, dtype=torch.long)\nDOC[:2].zero_()\nDOC[5:].masked_fill_(torch.tensor([True, False, True]), 3)\ndef mask_mod(b, h, q, k):\n    return DOC[q] == DOC[k]\n",
        Expect::Rows(&["11......", "11......", "..111.1.", "..111.1.", "..111.1.", ".....1.1", "..111.1.", ".....1.1"]),
    ),
    (
        "detach, long() and cpu() return what torch returns",
        "import torch\nN = 8\n\nDOC = torch.zeros(N, dtype=torch.long)\nDOC.detach()[1] = 2\nDOC.long()[2] = 2\nDOC.cpu()[3] = 3\nx = DOC.float()\nx[4] = 9\ndef mask_mod(b, h, q, k):\n    return DOC[q] >= DOC[k]\n",
        Expect::Rows(&["1...1111", "111.1111", "111.1111", "11111111", "1...1111", "1...1111", "1...1111", "1...1111"]),
    ),
    (
        "a transposed view written",
        "import torch\nN = 8\n\nM = torch.zeros(2, N, dtype=torch.long)\nM.t()[3] = 1\ndef mask_mod(b, h, q, k):\n    return M[0, q] == M[1, k]\n",
        Expect::Rows(&["111.1111", "111.1111", "111.1111", "...1....", "111.1111", "111.1111", "111.1111", "111.1111"]),
    ),
    (
        "in-place add of a float to an int tensor is torch's RuntimeError",
        "import torch\nN = 8\n\nDOC = torch.zeros(N, dtype=torch.long)\nDOC += 0.5\ndef mask_mod(b, h, q, k):\n    return DOC[q] == DOC[k]\n",
        Expect::Refused("can't be cast"),
    ),
    (
        "copy_ is not modelled: a later read is refused with both places",
        "import torch\nN = 8\n\nDOC = torch.zeros(N, dtype=torch.long)\nDOC.copy_(torch.arange(N) // 3)\ndef mask_mod(b, h, q, k):\n    return DOC[q] == DOC[k]\n",
        Expect::Refused("changed by the skipped statement at line 5, column 1"),
    ),
    (
        "a view written by an unmodelled in-place method",
        "import torch\nN = 8\n\nDOC = torch.zeros(N, dtype=torch.long)\ntail = DOC[4:]\ntail.add_(1)\ndef mask_mod(b, h, q, k):\n    return DOC[q] == DOC[k]\n",
        Expect::Refused("changed by the skipped statement at line 6"),
    ),
    (
        "a global written by a called function in a skipped statement",
        "import torch\nN = 8\n\nimport math\nW = 1\ndef setup():\n    global W\n    W = 3\n    torch.nonexistent_function_for_the_test()\nsetup()\ndef mask_mod(b, h, q, k):\n    return (q - k).abs() <= W\n",
        Expect::Refused("line 9, column 1"),
    ),
    (
        "del of a list item is modelled",
        "import torch\nN = 8\n\nL = [3, 1, 2, 5]\ndel L[1]\ndel L[-1:]\ndef mask_mod(b, h, q, k):\n    return (q - k).abs() <= len(L) + L[0] - 4\n",
        Expect::Rows(&["11......", "111.....", ".111....", "..111...", "...111..", "....111.", ".....111", "......11"]),
    ),
    (
        "a name bound by a skipped statement is reported with both places",
        "import torch\nN = 8\n\nX = torch.nonexistent_function_for_the_test(3)\ndef mask_mod(b, h, q, k):\n    return (q - k).abs() <= X\n",
        Expect::Refused("`X`, set by the skipped statement at line 4, column 1"),
    ),
    (
        "HAS_FLASH: an import only the environment decides",
        "import torch\nN = 8\n\ntry:\n    import flash_attn_not_installed\n    WINDOW = 2\nexcept ImportError:\n    WINDOW = 4\ndef mask_mod(b, h, q, k):\n    return (q - k).abs() <= WINDOW\n",
        Expect::Refused("whether `import flash_attn_not_installed` succeeds depends"),
    ),
    (
        "a try on an importable module runs its body",
        "import torch\nN = 8\n\ntry:\n    import math\n    WINDOW = 2\nexcept ImportError:\n    WINDOW = 4\ndef mask_mod(b, h, q, k):\n    return (q - k).abs() <= WINDOW\n",
        Expect::Rows(&["111.....", "1111....", "11111...", ".11111..", "..11111.", "...11111", "....1111", ".....111"]),
    ),
    (
        "an exception raised in a try body is not guessed",
        "import torch\nN = 8\n\nD = {\"a\": 1}\ntry:\n    W = D[\"b\"]\nexcept KeyError:\n    W = 3\ndef mask_mod(b, h, q, k):\n    return (q - k).abs() <= W\n",
        Expect::Refused("which `except` clause handles it is not modelled"),
    ),
    (
        "round(decimals=) is not ignored",
        "import torch\nN = 8\n\nS = torch.round(torch.tensor([0.26, 0.74]) * 4, decimals=1)\ndef mask_mod(b, h, q, k):\n    return (q - k).abs() <= S[0].long()\n",
        Expect::Refused("`decimals=`"),
    ),
    (
        "flatten(1) keeps the first dimension",
        "import torch\nN = 8\n\nT = torch.arange(2 * N).view(2, 2, 4).flatten(1)\ndef mask_mod(b, h, q, k):\n    return T[1, k] - N <= q\n",
        Expect::Rows(&["1.......", "11......", "111.....", "1111....", "11111...", "111111..", "1111111.", "11111111"]),
    ),
    (
        "sum(dtype=) casts first",
        "import torch\nN = 8\n\nS = torch.tensor([100, 100, 60], dtype=torch.int8).sum(dtype=torch.int8)\ndef mask_mod(b, h, q, k):\n    return (q - k) <= S % 5\n",
        Expect::Rows(&["11111111", "11111111", "11111111", "11111111", "11111111", ".1111111", "..111111", "...11111"]),
    ),
    (
        "searchsorted(out_int32=True)",
        "import torch\nN = 8\n\nBOUNDS = torch.tensor([0, 3, 5, 8])\ndef mask_mod(b, h, q, k):\n    return torch.searchsorted(BOUNDS, q, right=True, out_int32=True) == torch.searchsorted(BOUNDS, k, right=True)\n",
        Expect::Rows(&["111.....", "111.....", "111.....", "...11...", "...11...", ".....111", ".....111", ".....111"]),
    ),
    (
        ".to(other tensor) takes its dtype",
        "import torch\nN = 8\n\nF = torch.tensor([0.5])\nDOC = (torch.arange(N) // 3).to(F) / 2\ndef mask_mod(b, h, q, k):\n    return DOC[q] == DOC[k]\n",
        Expect::Rows(&["111.....", "111.....", "111.....", "...111..", "...111..", "...111..", "......11", "......11"]),
    ),
    (
        "set_default_dtype(float64) is refused",
        "import torch\nN = 8\n\ntorch.set_default_dtype(torch.float64)\nW = int(torch.tensor([0.1])[0] + 0.2 == 0.30000000000000004) * 2\ndef mask_mod(b, h, q, k):\n    return (q - k).abs() <= W\n",
        Expect::Refused("set_default_dtype"),
    ),
    (
        "an unknown keyword is refused by name",
        "import torch\nN = 8\n\nDOC = torch.zeros(N, dtype=torch.long, layout=torch.strided)\ndef mask_mod(b, h, q, k):\n    return DOC[q] == DOC[k]\n",
        Expect::Refused("`layout=`"),
    ),
    (
        "string escapes",
        "import torch\nN = 8\n\nS = '\\x41\\u0042\\103\\t'\nW = len(S) if S[:3] == 'ABC' else 0\ndef mask_mod(b, h, q, k):\n    return (q - k).abs() <= W\n",
        Expect::Rows(&["11111...", "111111..", "1111111.", "11111111", "11111111", ".1111111", "..111111", "...11111"]),
    ),
    (
        "lone CR line endings after a comment",
        "# a mask written on an old Mac\rimport torch\rN = 8\rdef mask_mod(b, h, q, k):\r    return q >= k\r",
        Expect::Rows(&["1.......", "11......", "111.....", "1111....", "11111...", "111111..", "1111111.", "11111111"]),
    ),
];

#[test]
fn each_reproducer_is_torchs_mask_or_a_true_refusal() {
    let mut failures = Vec::new();
    for (name, text, expect) in CASES {
        let got = MaskMod::parse(text).and_then(|m| m.to_mask(8)).map(|b| b.to_row_strings());
        match (expect, got) {
            (Expect::Rows(want), Ok(rows)) if rows == *want => {}
            (Expect::Refused(words), Err(e)) if e.to_string().contains(words) && e.to_string().contains("line ") => {}
            (_, got) => failures.push(format!("{name}: {got:?}")),
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
    // An Enum class is not modelled: its name is unavailable, with both places, never a NameError.
    let e = message(
        "from enum import Enum\nclass Mode(Enum):\n    A = 1\n    B = 2\nW = Mode.B.value\ndef mask_mod(b, h, q, k):\n    return q - k <= W\n",
    );
    assert!(e.contains("`Mode`, set by the skipped statement at line 2, column 1") && !e.contains("NameError"), "{e}");
}
