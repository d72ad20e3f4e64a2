//! The shared test vectors (tests/data/masks.json, a copy of the project's reference file) and the
//! THEORY §8 tables: every expected field must match.

use hasseflow_core::presets::{BlockTwoStream, Butterfly, build_preset};
use hasseflow_core::{Analysis, BitMatrix, FirstReach, SparsifyOptions, format, sparsify};
use serde_json::Value;
use std::collections::BTreeMap;

fn cases() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/masks.json");
    let text = std::fs::read_to_string(path).expect("tests/data/masks.json is in the repository");
    let doc: Value = serde_json::from_str(&text).expect("valid JSON");
    doc["cases"].as_array().expect("cases array").clone()
}

fn rows(v: &Value) -> Vec<String> {
    v.as_array().expect("rows").iter().map(|r| r.as_str().expect("row string").to_string()).collect()
}

fn mask_of(rows: &[String]) -> BitMatrix {
    format::parse_grid(&rows.join("\n")).expect("vector mask parses")
}

#[test]
fn every_vector_matches() {
    let cases = cases();
    assert!(cases.len() >= 18, "expected the full vector file, found {} cases", cases.len());
    for case in &cases {
        let name = case["name"].as_str().expect("name");
        let mask = mask_of(&rows(&case["mask"]));
        let e = &case["expect"];
        let a = Analysis::new(&mask);
        assert_eq!(a.n() as u64, e["n"].as_u64().expect("n"), "{name}: n");
        assert_eq!(a.depth() as u64, e["depth"].as_u64().expect("depth"), "{name}: depth");
        assert_eq!(a.is_dense(), e["dense"].as_bool().expect("dense"), "{name}: dense");
        assert_eq!(a.closure().to_row_strings(), rows(&e["limit"]), "{name}: limit");
        let classes: Vec<Vec<usize>> = serde_json::from_value(e["classes"].clone()).expect("classes");
        assert_eq!(a.classes(), classes.as_slice(), "{name}: classes");
        let edges: Vec<(usize, usize)> = serde_json::from_value(e["hasse_edges"].clone()).expect("edges");
        assert_eq!(a.hasse_edges(), edges.as_slice(), "{name}: hasse edges");
        // The first-reach matrix agrees on L* and on the limit.
        let d = FirstReach::new(&mask);
        assert_eq!(d.depth(), a.depth(), "{name}: first-reach depth");
        assert_eq!(&d.reach_at(a.depth()), a.closure(), "{name}: first-reach limit");
    }
}

fn preset(name: &str, n: usize, params: &[(&str, &str)]) -> BitMatrix {
    let params: BTreeMap<String, String> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    build_preset(name, n, &params, 8192).expect("preset builds")
}

#[test]
fn presets_reproduce_the_vector_masks() {
    let by_name: BTreeMap<String, Vec<String>> =
        cases().iter().map(|c| (c["name"].as_str().expect("name").to_string(), rows(&c["mask"]))).collect();
    let check = |name: &str, m: BitMatrix| assert_eq!(m.to_row_strings(), by_name[name], "{name}");
    check("causal n=4", preset("causal", 4, &[]));
    check("sliding window w=2 n=4", preset("sliding-window", 4, &[("w", "2")]));
    check("sliding window w=3 n=8", preset("sliding-window", 8, &[("w", "3")]));
    check("full bidirectional n=3", preset("full", 3, &[]));
    check("no attention n=3", BitMatrix::zeros(3));
    check("prefix-LM n=5 p=2", preset("prefix-lm", 5, &[("p", "2")]));
    check("block-causal n=6 s=2", preset("block-causal", 6, &[("s", "2")]));
    check("anti-causal n=4", preset("anti-causal", 4, &[]));
    check("block two-stream dense n=6 s=2", BlockTwoStream::new(6, 2).mask());
    check("block two-stream dense n=4 s=2", BlockTwoStream::new(4, 2).mask());
    check("butterfly dense n=4 padded", Butterfly { n: 4, minimal: false }.mask());
    check("butterfly dense n=4 minimal", Butterfly { n: 4, minimal: true }.mask());
    // The sparse vectors are the sparsified dense ones.
    check("block two-stream sparse n=6 s=2", sparsify(&BlockTwoStream::new(6, 2).mask(), SparsifyOptions::default()));
    check(
        "butterfly sparse n=4 padded",
        sparsify(&Butterfly { n: 4, minimal: false }.mask(), SparsifyOptions::default()),
    );
}

#[test]
fn theory_tight_depths() {
    // Causal sliding window with w keys: L* = ceil((N-1)/(w-1)).
    for n in [2usize, 5, 17, 64, 130] {
        for w in [2usize, 3, 4, 9] {
            let a = Analysis::new(&preset("sliding-window", n, &[("w", &w.to_string())]));
            assert_eq!(a.depth(), (n - 1).div_ceil(w - 1), "window n={n} w={w}");
        }
        assert_eq!(Analysis::new(&preset("cycle", n, &[])).depth(), n - 1, "cycle n={n}");
    }
    // Dense presets need one layer.
    for name in ["causal", "full", "block-causal", "prefix-lm", "document", "anti-causal"] {
        let a = Analysis::new(&preset(name, 40, &[]));
        assert!(a.is_dense() && a.depth() == 1, "{name}");
    }
    // Butterfly sparse needs n-1 layers, Block Two-Stream sparse 2 (THEORY §8 for n = 4, 6).
    let bf = sparsify(&Butterfly { n: 4, minimal: false }.mask(), SparsifyOptions::default());
    assert_eq!(Analysis::new(&bf).depth(), 3);
    let bts = sparsify(&BlockTwoStream::new(6, 2).mask(), SparsifyOptions::default());
    assert_eq!(Analysis::new(&bts).depth(), 2);
}

#[test]
fn theory_tables_two_stream_and_butterfly() {
    let bts = [
        "11..........",
        "11..........",
        "1111........",
        "1111........",
        "111111......",
        "111111......",
        "......11....",
        "......11....",
        "11......11..",
        "11......11..",
        "1111......11",
        "1111......11",
    ];
    assert_eq!(BlockTwoStream::new(6, 2).mask().to_row_strings(), bts);
    let bf = [
        "1...........",
        "11..........",
        "111.........",
        "1111........",
        "....1111....",
        ".....111....",
        "......11....",
        ".......1....",
        ".....1111...",
        "1.....11.1..",
        "11.....1..1.",
        "111........1",
    ];
    assert_eq!(Butterfly { n: 4, minimal: false }.mask().to_row_strings(), bf);
}

#[test]
fn catalog_presets_have_their_expected_limits_and_depths() {
    let n = 24;
    let an = |name: &str, params: &[(&str, &str)]| Analysis::new(&preset(name, n, params));
    let causal_limit = BitMatrix::from_fn(n, |q, k| k <= q);
    // Strictly causal: the residual restores the diagonal, so it is the causal order.
    let a = an("strictly-causal", &[]);
    assert_eq!((a.closure(), a.depth(), a.is_dense()), (&causal_limit, 1, true));
    // Identity: nothing moves.
    let a = an("identity", &[]);
    assert_eq!((a.depth(), a.classes().len(), a.hasse_edges().len()), (0, n, 0));
    // Dilated window w=3, d=2: only same-parity keys, two interleaved chains.
    let a = an("dilated-window", &[("w", "3"), ("d", "2")]);
    assert_eq!(a.closure(), &BitMatrix::from_fn(n, |q, k| k <= q && (q - k) % 2 == 0));
    assert_eq!((a.depth(), a.width()), (6, 2)); // ceil(11 / 2) steps of 2 along each chain
    // Chunked causal c=4: independent causal chunks.
    let a = an("chunked-causal", &[("c", "4")]);
    assert_eq!((a.depth(), a.width(), a.height()), (1, 6, 4));
    // Bidirectional window: one class, L* = ceil((n-1)/r).
    let a = an("bidirectional-window", &[("r", "2")]);
    assert_eq!((a.classes().len(), a.depth()), (1, 12));
    // Document masks: one class per segment, bidirectional; causal inside segments when asked.
    let a = an("document", &[("segments", "5,7,12")]);
    assert_eq!((a.classes().len(), a.hasse_edges().len(), a.depth()), (3, 0, 1));
    let a = an("document", &[("segments", "5,7,12"), ("causal", "true")]);
    assert_eq!((a.classes().len(), a.width(), a.depth()), (24, 3, 1));
    // Sink + window: everything sees the sink after one layer, the rest spreads by the window.
    let a = an("sink-window", &[("sinks", "1"), ("w", "4")]);
    assert_eq!((a.closure(), a.depth()), (&causal_limit, 8)); // from 1 to 23: ceil(22/3) = 8
    // Longformer with a global token: everyone reaches everyone in 2 layers.
    let a = an("longformer", &[("g", "1"), ("r", "1")]);
    assert_eq!((a.classes().len(), a.depth()), (1, 2));
    // Strided l=4: k = q-1..q-3 or multiples of 4 back: causal limit, few layers.
    let a = an("strided", &[("l", "4")]);
    assert_eq!(a.closure(), &causal_limit);
    assert!(a.depth() <= 2 && !a.is_dense());
    // Fixed l=4, c=1: summary positions carry each block forward.
    let a = an("fixed", &[("l", "4"), ("c", "1")]);
    assert_eq!((a.closure(), a.depth()), (&causal_limit, 2));
    // BigBird with a global block: one class.
    let a = an("bigbird", &[("b", "4"), ("g", "1")]);
    assert_eq!(a.classes().len(), 1);
    // XLNet with a reversed order: content chain reversed; every query sees its earlier content.
    let x = Analysis::new(&preset("xlnet", 6, &[("perm", "5,4,3,2,1,0")]));
    assert_eq!((x.classes().len(), x.depth(), x.height()), (12, 1, 6));
    // Random masks depend only on the seed.
    assert_eq!(preset("random", 50, &[("seed", "3")]), preset("random", 50, &[("seed", "3")]));
    assert_ne!(preset("random", 50, &[("seed", "3")]), preset("random", 50, &[("seed", "4")]));
}

#[test]
fn size_limits_are_enforced_with_clear_errors() {
    let big = format!("{{\"format\":\"hasseflow-mask\",\"version\":1,\"n\":{},\"rows\":[]}}", format::MAX_N + 1);
    let e = format::parse_mask_file(big.as_bytes()).expect_err("n above MAX_N");
    assert!(e.to_string().contains("out of range 1..=8192"), "{e}");
    let huge = vec![b' '; format::MAX_INPUT_BYTES + 1];
    let e = format::parse_mask_file(&huge).expect_err("oversized input");
    assert!(e.to_string().contains("limit is"), "{e}");
    // The largest size works end to end.
    let m = preset("sliding-window", 8192, &[("w", "1024")]);
    let a = Analysis::new(&m);
    assert_eq!(a.depth(), 9); // ceil(8191 / 1023)
}

#[test]
fn multi_stream_presets_name_their_positions_and_the_rest_do_not() {
    use hasseflow_core::presets::{CATALOG, preset_labels};
    let none = BTreeMap::new();
    for spec in CATALOG {
        let mask = build_preset(spec.name, 6, &none, 64).expect("defaults build");
        let labels = preset_labels(spec.name, 6, &none, 64).expect("same arguments");
        match spec.name {
            "xlnet" | "block-two-stream" | "butterfly" => {
                let labels = labels.expect("named positions");
                assert_eq!(labels.len(), mask.n(), "{}", spec.name);
                let mut unique = labels.clone();
                unique.sort();
                unique.dedup();
                assert_eq!(unique.len(), labels.len(), "{}: labels are distinct", spec.name);
            }
            _ => assert_eq!(labels, None, "{}", spec.name),
        }
    }
    // The layouts of THEORY §6, position by position.
    let params = BTreeMap::from([("s".to_string(), "2".to_string()), ("drop_last".to_string(), "true".to_string())]);
    assert_eq!(
        preset_labels("block-two-stream", 4, &params, 64).expect("valid"),
        Some(["w_0", "w_1", "m@0", "m@1", "m@2", "m@3"].map(String::from).to_vec())
    );
    let minimal = BTreeMap::from([("minimal".to_string(), "true".to_string())]);
    assert_eq!(
        preset_labels("butterfly", 3, &minimal, 64).expect("valid"),
        Some(["F_0", "F_1", "B_1", "B_2", "P_0", "P_1", "P_2"].map(String::from).to_vec())
    );
    assert_eq!(
        preset_labels("xlnet", 2, &none, 64).expect("valid"),
        Some(["h_0", "h_1", "g_0", "g_1"].map(String::from).to_vec())
    );
    // Bad arguments fail as build_preset fails.
    assert!(preset_labels("butterfly", 300, &none, 512).is_err());
    assert!(preset_labels("nope", 3, &none, 64).is_err());
}
