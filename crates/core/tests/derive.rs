//! The derivation pipeline against THEORY §5, §6 and §8: the families reproduce the preset masks
//! exactly, every derived mask is leak-free, minimal and consistent, plus property tests over
//! random families and the repeated-label case where keys alone cannot decide equivalence.

// Test helpers unwrap freely (a failure is a test failure); index loops mirror the math.
#![allow(clippy::unwrap_used, clippy::needless_range_loop)]

use hasseflow_core::derive::{
    Aggregate, AutoregressiveOptions, BlockOptions, ButterflyOptions, Derivation, Family, FamilyError, Input,
    MaeOptions, Task, autoregressive, block_generation, butterfly, derive, masked_autoencoding, parse_family,
};
use hasseflow_core::presets::{Butterfly, Inner, TwoStreamOrder, xlnet};
use hasseflow_core::rng::SplitMix64;
use hasseflow_core::{Analysis, BitMatrix, SparsifyOptions, sparsify};

/// The checks every derivation of a well-formed family must pass.
fn assert_sound(d: &Derivation) {
    let r = d.report();
    assert!(r.task_leaks.is_empty(), "{}: task leaks {:?}", r.family, r.task_leaks);
    assert!(r.leaks.is_empty(), "{}: merged leaks {:?}", r.family, r.leaks);
    assert!(r.minimal, "{}: {:?}", r.family, r.criterion_violations);
    assert!(r.consistent, "{}: {:?}", r.family, r.inconsistent);
    assert!(r.diagram_matches, "{}: diagram differs from the mask's Hasse diagram", r.family);
    assert_eq!(r.undecided, 0);
    assert_sound_masks(d);
}

/// Mask-level invariants that hold for every derivation.
fn assert_sound_masks(d: &Derivation) {
    let a = Analysis::new(d.dense());
    assert!(a.is_dense(), "the dense mask is its own closure");
    assert!(a.depth() <= 1);
    assert_eq!(Analysis::new(d.sparse()).closure(), d.dense(), "sparse and dense share the limit");
    assert_eq!(d.position_node().len(), d.dense().n());
    // Merged diagram closure (over positions) equals the dense mask.
    let nodes = d.nodes().len();
    let mut le = vec![vec![false; nodes]; nodes];
    for (v, row) in le.iter_mut().enumerate() {
        row[v] = true;
    }
    for _ in 0..nodes {
        for &(lo, up) in d.edges() {
            for x in 0..nodes {
                if le[lo][x] {
                    le[up][x] = true;
                }
            }
        }
    }
    let pn = d.position_node();
    assert_eq!(&BitMatrix::from_fn(pn.len(), |i, j| le[pn[i]][pn[j]]), d.dense());
}

fn rows(m: &BitMatrix) -> Vec<String> {
    m.to_row_strings()
}

#[test]
fn autoregressive_merges_into_the_causal_mask() {
    for n in [2usize, 3, 4, 5, 9, 66] {
        let family = autoregressive(AutoregressiveOptions::new(n)).unwrap();
        let d = derive(&family).unwrap();
        assert_sound(&d);
        let r = d.report();
        assert_eq!((r.nodes_before, r.nodes_after, r.padding_nodes), (n * (n - 1) / 2, n - 1, 0));
        assert_eq!(d.dense(), &BitMatrix::from_fn(n - 1, |q, k| k <= q), "n = {n}");
        // w_1..w_{n-1} are targets, w_0 is not; every position carries a loss.
        assert_eq!((r.target_tokens, r.sample_tokens), (n - 1, n));
        assert_eq!(r.supervision_density, (n - 1) as f64 / n as f64);
        assert_eq!(r.loss_position_share, 1.0);
        assert_eq!((r.depth_dense, r.depth_sparse), (usize::from(n > 2), n - 2));
        let labels: Vec<String> = d.label_texts().into_iter().map(|l| l.unwrap()).collect();
        assert_eq!(labels, (1..n).map(|t| format!("w_{t}")).collect::<Vec<_>>());
        assert_eq!(d.position_texts(), (0..n - 1).map(|t| format!("w_{t}")).collect::<Vec<_>>());
    }
    let padded = derive(&autoregressive(AutoregressiveOptions { pad: true, ..AutoregressiveOptions::new(6) }).unwrap())
        .map(|d| (d.dense().clone(), d.report().padding_nodes))
        .unwrap();
    assert_eq!(padded, (BitMatrix::from_fn(6, |q, k| k <= q), 1));
}

#[test]
fn autoregressive_as_bidirectional_blocks_shares_nothing() {
    let n = 6;
    let family =
        autoregressive(AutoregressiveOptions { bidirectional: true, ..AutoregressiveOptions::new(n) }).unwrap();
    let d = derive(&family).unwrap();
    assert_sound(&d);
    let r = d.report();
    assert_eq!((r.nodes_before, r.nodes_after, r.positions), (n - 1, n - 1, n * (n - 1) / 2));
    assert!(d.edges().is_empty(), "block-diagonal: no edges");
    assert_eq!(Analysis::new(d.dense()).classes().len(), n - 1);
}

#[test]
fn block_generation_reproduces_the_block_two_stream_table() {
    let family = block_generation(BlockOptions::new(6, 2)).unwrap();
    let d = derive(&family).unwrap();
    assert_sound(&d);
    assert_eq!(rows(d.dense()), vector_mask("block two-stream dense n=6 s=2"));
    let r = d.report();
    // B = 3: B(B+1)/2 = 6 task nodes -> 2B-1 = 5, plus the last clean block as padding.
    assert_eq!((r.nodes_before, r.nodes_after, r.padding_nodes, r.positions), (6, 5, 1, 12));
    assert_eq!((r.depth_dense, r.depth_sparse), (1, 2));
    assert_eq!(r.labelled_positions, 6);
    let texts = d.position_texts();
    assert_eq!(texts[..6], ["w_0", "w_1", "w_2", "w_3", "w_4", "w_5"]);
    assert_eq!(texts[6..], ["m@0", "m@1", "m@2", "m@3", "m@4", "m@5"]);
    assert_eq!(d.label_texts()[6..].iter().map(|l| l.clone().unwrap()).collect::<Vec<_>>(), texts[..6]);
    // Hasse: K1 -> K2 -> K3, K1 -> Q2, K2 -> Q3 (1-based), Q1 isolated.
    let edges: Vec<(String, String)> = d.edges().iter().map(|&(a, b)| (d.node_text(a), d.node_text(b))).collect();
    let e = |a: &str, b: &str| (a.to_string(), b.to_string());
    let mut want = vec![
        e("{w_0, w_1}", "{w_2, w_3}"),
        e("{w_2, w_3}", "{w_4, w_5}"),
        e("{w_0, w_1}", "{m@2, m@3}"),
        e("{w_2, w_3}", "{m@4, m@5}"),
    ];
    let mut got = edges;
    want.sort();
    got.sort();
    assert_eq!(got, want);
    // The same as the minimal layout: 2B-1 nodes, 2n-s positions.
    let d = derive(&block_generation(BlockOptions { minimal: true, ..BlockOptions::new(6, 2) }).unwrap()).unwrap();
    assert_eq!((d.report().nodes_after, d.report().padding_nodes, d.report().positions), (5, 0, 10));
}

#[test]
fn block_generation_equals_the_preset_for_every_option() {
    for n in 1..=9usize {
        for s in 1..=4usize {
            for clean in [Inner::Full, Inner::Causal] {
                for query in [Inner::Full, Inner::Causal] {
                    for prompt in [0usize, 2] {
                        for minimal in [false, true] {
                            for order in [TwoStreamOrder::Grouped, TwoStreamOrder::Interleaved] {
                                let o = BlockOptions { n, block: s, clean, query, prompt, minimal, order };
                                let family = block_generation(o).unwrap();
                                let d = derive(&family).unwrap();
                                assert_sound(&d);
                                assert_eq!(d.dense(), &o.preset().mask(), "{o:?}");
                                if clean == Inner::Full && query == Inner::Full && prompt == 0 {
                                    let b = n.div_ceil(s);
                                    let r = d.report();
                                    assert_eq!((r.nodes_before, r.nodes_after), (b * (b + 1) / 2, 2 * b - 1), "{o:?}");
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn block_generation_with_block_one_is_xlnet_in_identity_order() {
    for n in 1..=12usize {
        let d = derive(&block_generation(BlockOptions::new(n, 1)).unwrap()).unwrap();
        assert_eq!(d.dense(), &xlnet(n, &(0..n).collect::<Vec<_>>()), "n = {n}");
    }
}

#[test]
fn butterfly_reproduces_the_table_and_merges_n_squared_into_3n_minus_2() {
    let d = derive(&butterfly(ButterflyOptions::new(4)).unwrap()).unwrap();
    assert_sound(&d);
    assert_eq!(rows(d.dense()), vector_mask("butterfly dense n=4 padded"));
    let r = d.report();
    assert_eq!((r.nodes_before, r.nodes_after, r.padding_nodes, r.positions), (16, 10, 2, 12));
    assert_eq!((r.depth_dense, r.depth_sparse), (1, 3));
    assert_eq!(d.position_texts()[8..], ["w'_0[w_1]", "w'_1[w_0,w_2]", "w'_2[w_1,w_3]", "w'_3[w_2]"]);
    for n in 2..=12usize {
        for minimal in [false, true] {
            let o = ButterflyOptions { minimal, ..ButterflyOptions::new(n) };
            let d = derive(&butterfly(o).unwrap()).unwrap();
            assert_sound(&d);
            assert_eq!(d.dense(), &Butterfly { n, minimal }.mask(), "n = {n} minimal = {minimal}");
            let r = d.report();
            assert_eq!((r.nodes_before, r.nodes_after), (n * n, 3 * n - 2));
            // Every P_k is labelled: full supervision of the predictors.
            assert_eq!(r.labelled_positions, n);
        }
    }
}

#[test]
fn butterfly_aggregation_options_stay_leak_free() {
    for aggregate in [Aggregate::Mask, Aggregate::Neighbours(2), Aggregate::Neighbours(5)] {
        let o = ButterflyOptions { aggregate, ..ButterflyOptions::new(7) };
        let d = derive(&butterfly(o).unwrap()).unwrap();
        assert_sound(&d);
        assert_eq!(d.dense(), &Butterfly { n: 7, minimal: false }.mask());
    }
}

#[test]
fn a_leak_is_reported_with_position_and_token() {
    // One task: the predictor of w_1 holds w'_1 built from w_1 itself.
    let mut f = Family::new("leaky");
    let agg = f.intern(Input::aggregated("w", 1, vec![hasseflow_core::derive::Token::new("w", 1)]));
    let w0 = f.token("w", 0);
    let w1 = f.token("w", 1);
    f.push(Task {
        name: "T".into(),
        inputs: vec![w0, agg],
        labels: vec![None, Some(w1)],
        groups: vec![0, 0],
        mask: BitMatrix::from_fn(2, |q, k| k <= q),
        padding: false,
    })
    .unwrap();
    let d = derive(&f).unwrap();
    let r = d.report();
    assert_eq!(r.task_leaks.len(), 1);
    assert_eq!((r.task_leaks[0].position, r.task_leaks[0].label.as_str()), (1, "w_1"));
    assert_eq!(r.task_leaks[0].via, "w'_1[w_1]");
    assert_eq!(r.leaks.len(), 1);
    assert!(d.render_text().contains("sees w'_1[w_1]"));
}

/// Task given as a list of nodes `(inputs, reads)`; node `label_node` predicts `label`.
fn dag_task(f: &mut Family, name: &str, nodes: &[(&[&str], &[usize])], label: Option<(usize, &str)>) -> Task {
    let mut inputs = Vec::new();
    let mut labels = Vec::new();
    let mut node_of = Vec::new();
    for (j, (ins, _)) in nodes.iter().enumerate() {
        for s in ins.iter() {
            inputs.push(f.intern(hasseflow_core::derive::parse_input(s).unwrap()));
            labels.push(None);
            node_of.push(j);
        }
    }
    if let Some((j, l)) = label {
        let p = node_of.iter().rposition(|&x| x == j).unwrap();
        labels[p] = Some(f.intern(hasseflow_core::derive::parse_input(l).unwrap()));
    }
    // reads-closure over nodes
    let m = nodes.len();
    let mut le = vec![vec![false; m]; m];
    for _ in 0..m {
        for j in 0..m {
            le[j][j] = true;
            for &p in nodes[j].1 {
                for x in 0..m {
                    if le[p][x] {
                        le[j][x] = true;
                    }
                }
            }
        }
    }
    let n = inputs.len();
    Task {
        name: name.into(),
        inputs,
        labels,
        groups: vec![0; n],
        mask: BitMatrix::from_fn(n, |q, k| le[node_of[q]][node_of[k]]),
        padding: false,
    }
}

#[test]
fn repeated_labels_keys_alone_cannot_decide_and_the_fallback_does() {
    // Task A: v covers a and b; a covers x, b covers x'; x and x' both hold w_0.
    // Task B: the same but a and b cover one shared x. Keys of v are equal (same unravelled
    // tree) but D(v) has 5 nodes in A and 4 in B: not equivalent.
    // Task C: task A with its positions in another order: equivalent to A, found by the
    // explicit isomorphism test.
    let mut f = Family::new("repeated");
    let a = dag_task(
        &mut f,
        "A",
        &[(&["w_0"], &[]), (&["w_0"], &[]), (&["w_1"], &[0]), (&["w_2"], &[1]), (&["w_3"], &[2, 3])],
        Some((4, "w_4")),
    );
    let b = dag_task(
        &mut f,
        "B",
        &[(&["w_0"], &[]), (&["w_1"], &[0]), (&["w_2"], &[0]), (&["w_3"], &[1, 2])],
        Some((3, "w_4")),
    );
    let c = dag_task(
        &mut f,
        "C",
        &[(&["w_3"], &[3, 4]), (&["w_0"], &[]), (&["w_0"], &[]), (&["w_1"], &[2]), (&["w_2"], &[1])],
        Some((0, "w_4")),
    );
    for t in [a, b, c] {
        f.push(t).unwrap();
    }
    let d = derive(&f).unwrap();
    let top = |t: usize| {
        let diag = &d.diagrams()[t];
        let v =
            (0..diag.node_count()).find(|&v| d.family().input(diag.node_inputs(v)[0]).to_string() == "w_3").unwrap();
        (diag.key(v), d.node_class()[t][v])
    };
    let (ka, ca) = top(0);
    let (kb, cb) = top(1);
    let (kc, cc) = top(2);
    assert_eq!(ka, kb, "the keys cannot tell A's top from B's");
    assert_ne!(ca, cb, "the fallback isomorphism test does");
    assert_eq!(kc, ka);
    assert_eq!(cc, ca, "A and its reordering C are equivalent");
    let r = d.report();
    // x ≅ x' inside A: merged into one node, so A's top loses a copy of w_0 in its dependency.
    // The report says so, and the merged tops of A and B become equivalent (not minimal).
    assert_eq!((r.nodes_before, r.nodes_after), (14, 5));
    assert!(!r.consistent);
    assert!(r.inconsistent.iter().any(|s| s.contains("task 0 (A)")));
    assert!(!r.minimal);
    assert_sound_masks(&d);
    // B alone is key-injective: sound.
    let mut g = Family::new("B only");
    let b = dag_task(
        &mut g,
        "B",
        &[(&["w_0"], &[]), (&["w_1"], &[0]), (&["w_2"], &[0]), (&["w_3"], &[1, 2])],
        Some((3, "w_4")),
    );
    g.push(b).unwrap();
    assert_sound(&derive(&g).unwrap());
}

#[test]
fn masked_autoencoding_family() {
    // Bidirectional encoder: nothing merges.
    let d = derive(&masked_autoencoding(MaeOptions::new(8, 2)).unwrap()).unwrap();
    assert_sound(&d);
    let r = d.report();
    assert_eq!((r.tasks, r.nodes_before, r.nodes_after, r.positions), (4, 8, 8, 32));
    assert_eq!(r.labelled_positions, 8);
    // Causal encoder: the encoder prefixes before each span are shared.
    let d =
        derive(&masked_autoencoding(MaeOptions { causal_encoder: true, ..MaeOptions::new(8, 2) }).unwrap()).unwrap();
    assert_sound(&d);
    let r = d.report();
    assert_eq!(r.nodes_before, 4 * 6 + 4);
    assert!(r.nodes_after < r.nodes_before);
    // w_0..w_5 once each, the chains w_2..w_7, w_4..w_7 and w_6..w_7 after the gaps, 4 mask blocks.
    assert_eq!(r.nodes_after, 6 + 6 + 4 + 2 + 4);
}

#[test]
fn family_errors_are_typed() {
    assert!(matches!(autoregressive(AutoregressiveOptions::new(1)), Err(FamilyError::Parameter { .. })));
    assert!(matches!(block_generation(BlockOptions::new(4, 0)), Err(FamilyError::Parameter { .. })));
    assert!(matches!(butterfly(ButterflyOptions::new(1)), Err(FamilyError::Parameter { .. })));
    assert!(matches!(masked_autoencoding(MaeOptions::new(4, 5)), Err(FamilyError::Parameter { .. })));
    assert!(matches!(derive(&Family::new("empty")), Err(FamilyError::Invalid { .. })));
}

fn family_err(text: &str) -> String {
    parse_family(text.as_bytes()).unwrap_err().to_string()
}

#[test]
fn bad_family_files_say_where_and_what() {
    let head = r#"{"format": "hasseflow-family", "version": 1, "tasks": "#;
    let e = |tasks: &str| family_err(&format!("{head}{tasks}}}"));
    assert!(family_err("").starts_with("malformed family JSON at line 1"));
    assert!(family_err("{\"format\": ").starts_with("malformed family JSON"));
    assert!(family_err(r#"{"format": "x", "version": 1, "tasks": []}"#).starts_with("format: is \"x\""));
    assert!(family_err(r#"{"format": "hasseflow-family", "version": 7, "tasks": []}"#).contains("version 7"));
    assert!(e("[]").starts_with("tasks: a family needs"));
    assert!(e(r#"[{"inputs": ["w_0"], "mask": ["1"], "extra": 1}]"#).contains("unknown field `extra`"));
    assert_eq!(e(r#"[{"inputs": ["w_0"]}]"#), "tasks[0]: give either \"mask\" (with \"inputs\") or \"nodes\"");
    assert!(
        e(r#"[{"inputs": ["w_0", "q"], "mask": ["1.", "11"]}]"#).starts_with("tasks[0].inputs[1]: 'q' is not a token")
    );
    assert!(e(r#"[{"inputs": ["w_0", "w_1"], "mask": ["1."]}]"#).starts_with("tasks[0].mask: 1 rows for 2 inputs"));
    assert!(e(r#"[{"inputs": ["w_0", "w_1"], "mask": ["1.", "1x"]}]"#).contains("tasks[0].mask[1]: column 1: 'x'"));
    assert!(e(r#"[{"inputs": ["w_0"], "mask": ["11"]}]"#).contains("tasks[0].mask[0]: 2 columns, expected 1"));
    assert!(e(r#"[{"inputs": ["w_0"], "mask": ["1"], "labels": ["m@1"]}]"#).starts_with("tasks[0].labels[0]"));
    assert!(e(r#"[{"inputs": ["w_0"], "mask": ["1"], "labels": [null, null]}]"#).contains("2 labels for 1 inputs"));
    assert!(e(r#"[{"inputs": ["w'_1[w_0"], "mask": ["1"]}]"#).contains("ends with ']'"));
    assert!(
        e(r#"[{"nodes": [{"id": "a", "inputs": ["w_0"], "reads": ["zz"]}]}]"#)
            .starts_with("tasks[0].nodes[0].reads[0]: unknown node 'zz'")
    );
    assert!(
        e(r#"[{"nodes": [{"id": "a", "inputs": ["w_0"]}, {"id": "a", "inputs": ["w_1"]}]}]"#)
            .contains("'a' is used twice")
    );
    assert!(e(r#"[{"nodes": [{"id": "a", "inputs": ["w_0"], "reads": ["b"]}, {"id": "b", "inputs": ["w_1"], "reads": ["a"]}]}]"#)
        .contains("cycle through node 'a'"));
    assert!(e(r#"[{"nodes": [{"id": "a", "inputs": []}]}]"#).contains("at least one input"));
    assert!(e(r#"[{"nodes": [{"id": "a", "inputs": ["w_0"]}], "inputs": ["w_0"]}]"#).contains("belongs to each node"));
    assert!(e(r#"[{"inputs": ["w_0"], "mask": ["1"], "labels": ["w_0"], "padding": true}]"#).contains("no labels"));
    assert!(parse_family(&[0xff, 0xfe]).unwrap_err().to_string().contains("UTF-8"));
}

#[test]
fn the_example_family_file_parses_and_derives() {
    let text = include_str!("../../../tests/data/family_example.json");
    let family = parse_family(text.as_bytes()).unwrap();
    let d = derive(&family).unwrap();
    assert_sound(&d);
    let r = d.report();
    assert_eq!((r.tasks, r.nodes_before, r.nodes_after, r.positions), (3, 6, 3, 4));
    // Sample w_0..w_3, targets w_1..w_3; all four positions are labelled.
    assert_eq!((r.target_tokens, r.sample_tokens, r.supervision_density), (3, 4, 0.75));
    assert_eq!((r.labelled_positions, r.loss_position_share), (4, 1.0));
}

// Supervision density (docs/THEORY.md §5): distinct sample tokens that are targets ÷ distinct
// sample tokens; the loss position share: labelled positions ÷ positions. One test per built-in
// family, every figure worked out from the definitions.

/// `(target_tokens, sample_tokens, supervision_density, labelled_positions, positions,
/// loss_position_share)` of a derivation.
fn supervision(d: &Derivation) -> (usize, usize, f64, usize, usize, f64) {
    let r = d.report();
    (r.target_tokens, r.sample_tokens, r.supervision_density, r.labelled_positions, r.positions, r.loss_position_share)
}

#[test]
fn supervision_density_of_the_autoregressive_family_is_n_minus_1_over_n() {
    // T_k predicts w_k (k = 1..n-1): w_0 is never a target. n = 8: 7 of 8 tokens; the causal
    // mask over w_0..w_6 has 7 positions, each predicting the next token.
    let d = derive(&autoregressive(AutoregressiveOptions::new(8)).unwrap()).unwrap();
    assert_eq!(supervision(&d), (7, 8, 0.875, 7, 7, 1.0));
    let d = derive(&autoregressive(AutoregressiveOptions::new(2)).unwrap()).unwrap();
    assert_eq!(supervision(&d), (1, 2, 0.5, 1, 1, 1.0));
    // Padding keeps w_7 as a position without a loss; the sample is the same.
    let d =
        derive(&autoregressive(AutoregressiveOptions { pad: true, ..AutoregressiveOptions::new(8) }).unwrap()).unwrap();
    assert_eq!(supervision(&d), (7, 8, 0.875, 7, 8, 0.875));
    // One bidirectional block per task: 1 + 2 + ... + 7 = 28 positions, one loss per task.
    let o = AutoregressiveOptions { bidirectional: true, ..AutoregressiveOptions::new(8) };
    let d = derive(&autoregressive(o).unwrap()).unwrap();
    assert_eq!(supervision(&d), (7, 8, 0.875, 7, 28, 0.25));
}

#[test]
fn supervision_density_of_block_generation_is_full() {
    // Block Two-Stream n = 8, s = 2: every w_t is predicted by m@t; 8 of 16 positions carry a loss.
    let d = derive(&block_generation(BlockOptions::new(8, 2)).unwrap()).unwrap();
    assert_eq!(supervision(&d), (8, 8, 1.0, 8, 16, 0.5));
    // Minimal layout (2n - s = 14 positions): the same tokens, a larger share of loss positions.
    let d = derive(&block_generation(BlockOptions { minimal: true, ..BlockOptions::new(8, 2) }).unwrap()).unwrap();
    assert_eq!(supervision(&d), (8, 8, 1.0, 8, 14, 8.0 / 14.0));
    // s = 1 (XLNet two-stream in identity order): still every token, 8 of 16 positions.
    let d = derive(&block_generation(BlockOptions::new(8, 1)).unwrap()).unwrap();
    assert_eq!(supervision(&d), (8, 8, 1.0, 8, 16, 0.5));
    // A clean prompt p_0..p_2 is read by every task and predicted by none: 8 of 11 tokens.
    let d = derive(&block_generation(BlockOptions { prompt: 3, ..BlockOptions::new(8, 2) }).unwrap()).unwrap();
    assert_eq!(supervision(&d), (8, 11, 8.0 / 11.0, 8, 19, 8.0 / 19.0));
}

#[test]
fn supervision_density_of_butterfly_is_full() {
    // n = 8, padded [F | B | P]: every w_k is predicted by P_k (100%), 8 of 24 positions.
    let d = derive(&butterfly(ButterflyOptions::new(8)).unwrap()).unwrap();
    assert_eq!(supervision(&d), (8, 8, 1.0, 8, 24, 8.0 / 24.0));
    // Minimal layout, 3n - 2 = 22 positions.
    let d = derive(&butterfly(ButterflyOptions { minimal: true, ..ButterflyOptions::new(8) }).unwrap()).unwrap();
    assert_eq!(supervision(&d), (8, 8, 1.0, 8, 22, 8.0 / 22.0));
    // P_k holding a mask token instead of w'_k: the streams still hold every w_t.
    let o = ButterflyOptions { aggregate: Aggregate::Mask, ..ButterflyOptions::new(8) };
    let d = derive(&butterfly(o).unwrap()).unwrap();
    assert_eq!(supervision(&d), (8, 8, 1.0, 8, 24, 8.0 / 24.0));
    for n in 2..=12usize {
        let d = derive(&butterfly(ButterflyOptions::new(n)).unwrap()).unwrap();
        assert_eq!(supervision(&d), (n, n, 1.0, n, 3 * n, n as f64 / (3 * n) as f64), "n = {n}");
    }
}

#[test]
fn supervision_density_of_masked_autoencoding_is_the_masked_fraction() {
    // Spans tiling the sample (n = 8, span 2: starts 0, 2, 4, 6) mask every token in some task;
    // 4 tasks x 8 positions, one loss per masked position.
    let d = derive(&masked_autoencoding(MaeOptions::new(8, 2)).unwrap()).unwrap();
    assert_eq!(supervision(&d), (8, 8, 1.0, 8, 32, 0.25));
    // Span 3: starts 0 and 3 (a third span would not fit), w_6 and w_7 are never masked.
    let d = derive(&masked_autoencoding(MaeOptions::new(8, 3)).unwrap()).unwrap();
    assert_eq!(supervision(&d), (6, 8, 0.75, 6, 16, 0.375));
    // Span 2 every 4 tokens: starts 0 and 4, half the tokens are masked.
    let d = derive(&masked_autoencoding(MaeOptions { stride: 4, ..MaeOptions::new(8, 2) }).unwrap()).unwrap();
    assert_eq!(supervision(&d), (4, 8, 0.5, 4, 16, 0.25));
    // Causal encoder: shared prefixes shrink the positions (26), not the targets.
    let o = MaeOptions { causal_encoder: true, ..MaeOptions::new(8, 2) };
    let d = derive(&masked_autoencoding(o).unwrap()).unwrap();
    assert_eq!(supervision(&d), (8, 8, 1.0, 8, 26, 8.0 / 26.0));
}

/// A random base DAG over distinct tokens; each task is the down-set of one node, labelled at the
/// top. Keys are injective, so the merge must be exactly the union of the chosen down-sets.
#[test]
fn random_down_set_families_merge_to_the_union_of_their_down_sets() {
    let mut rng = SplitMix64::new(42);
    for round in 0..60 {
        let m = 2 + rng.below(14);
        let reads: Vec<Vec<usize>> = (0..m).map(|j| (0..j).filter(|_| rng.next_f64() < 0.3).collect()).collect();
        let mut le = vec![vec![false; m]; m];
        for j in 0..m {
            le[j][j] = true;
            for &p in &reads[j] {
                let row = le[p].clone();
                for x in 0..m {
                    le[j][x] |= row[x];
                }
            }
        }
        let tasks = 1 + rng.below(5);
        let mut f = Family::new(format!("random {round}"));
        let mut union = vec![false; m];
        let mut before = 0;
        for t in 0..tasks {
            let top = rng.below(m);
            let members: Vec<usize> = (0..m).filter(|&x| le[top][x]).collect();
            before += members.len();
            for &x in &members {
                union[x] = true;
            }
            // shuffle positions
            let mut order = members.clone();
            for i in (1..order.len()).rev() {
                order.swap(i, rng.below(i + 1));
            }
            let inputs: Vec<u32> = order.iter().map(|&x| f.token("w", x)).collect();
            let label = f.token("y", t);
            let labels = order.iter().map(|&x| (x == top).then_some(label)).collect();
            f.push(Task {
                name: format!("T{t}"),
                inputs,
                labels,
                groups: vec![0; order.len()],
                mask: BitMatrix::from_fn(order.len(), |q, k| le[order[q]][order[k]]),
                padding: false,
            })
            .unwrap();
        }
        let d = derive(&f).unwrap();
        assert_sound(&d);
        let r = d.report();
        assert_eq!(r.nodes_before, before);
        assert_eq!(r.nodes_after, union.iter().filter(|&&u| u).count(), "round {round}");
        // Idempotent: deriving the merged task again changes nothing.
        let g = rebuild_with(d.family().clone(), d.to_task("merged"));
        let d2 = derive(&g).unwrap();
        assert_sound(&d2);
        assert_eq!(d2.dense(), d.dense());
        assert_eq!((d2.report().nodes_before, d2.report().nodes_after), (r.nodes_after, r.nodes_after));
        assert_eq!(d2.position_texts(), d.position_texts());
        if r.multi_label_positions == 0 {
            assert_eq!(d2.label_texts(), d.label_texts());
        }
    }
}

/// The same interned inputs with `task` as the only task.
fn rebuild_with(f: Family, task: Task) -> Family {
    let mut g = Family::new(f.name.clone());
    let map: Vec<u32> = (0..f.input_count() as u32).map(|i| g.intern(f.input(i).clone())).collect();
    let t = Task {
        inputs: task.inputs.iter().map(|&i| map[i as usize]).collect(),
        labels: task.labels.iter().map(|l| l.map(|i| map[i as usize])).collect(),
        ..task
    };
    g.push(t).unwrap();
    g
}

/// Random masks over a two-token alphabet with random labels: repeated inputs everywhere. The
/// pipeline must not panic, the masks must agree with each other, and the leak report must agree
/// with a direct scan of the contents.
#[test]
fn random_masks_with_repeated_inputs_keep_the_mask_invariants() {
    let mut rng = SplitMix64::new(7);
    for round in 0..80 {
        let mut f = Family::new(format!("noisy {round}"));
        for t in 0..1 + rng.below(4) {
            let n = 1 + rng.below(9);
            let p = [0.1, 0.3, 0.6][round % 3];
            let mask = BitMatrix::from_fn(n, |_, _| rng.next_f64() < p);
            let inputs: Vec<u32> = (0..n)
                .map(|_| match rng.below(3) {
                    0 => f.token("w", rng.below(2)),
                    1 => f.intern(Input::Mask(rng.below(2))),
                    _ => f.intern(Input::aggregated("w", 0, vec![hasseflow_core::derive::Token::new("w", 1)])),
                })
                .collect();
            let labels = (0..n).map(|_| (rng.next_f64() < 0.4).then(|| f.token("w", rng.below(2)))).collect();
            f.push(Task { name: format!("T{t}"), inputs, labels, groups: vec![0; n], mask, padding: false }).unwrap();
        }
        let d = derive(&f).unwrap();
        assert_sound_masks(&d);
        // Leak report = direct scan of task contents.
        let mut direct = 0;
        for (t, task) in f.tasks().iter().enumerate() {
            for (p, l) in task.labels.iter().enumerate() {
                if let Some(l) = l {
                    let tok = match f.input(*l) {
                        Input::Token(tok) => tok.clone(),
                        _ => unreachable!(),
                    };
                    direct += d.task_content(t, p).iter().filter(|&&i| f.input(i).carries(&tok)).count();
                }
            }
        }
        assert_eq!(d.report().task_leaks.len(), direct, "round {round}");
        // Every task node maps to a merged node with the same inputs.
        for (t, diag) in d.diagrams().iter().enumerate() {
            for v in 0..diag.node_count() {
                assert_eq!(diag.node_inputs(v), &d.nodes()[d.node_class()[t][v]].inputs[..]);
            }
        }
    }
}

#[test]
fn sparse_mask_is_the_sparsified_dense_mask() {
    let d = derive(&butterfly(ButterflyOptions::new(5)).unwrap()).unwrap();
    assert_eq!(d.sparse(), &sparsify(d.dense(), SparsifyOptions::default()));
}

/// Oracle for node equivalence: brute force over all bijections of the two down-sets that map
/// top to top, keep input multisets and preserve and reflect the order.
fn oracle_equivalent(d: &Derivation, (t1, v1): (usize, usize), (t2, v2): (usize, usize)) -> bool {
    let (a, b) = (&d.diagrams()[t1], &d.diagrams()[t2]);
    let (aa, ab) = (a.analysis(), b.analysis());
    let down = |an: &Analysis, v: usize| (0..an.classes().len()).filter(|&u| an.class_le(u, v)).collect::<Vec<_>>();
    let (da, db) = (down(aa, v1), down(ab, v2));
    if da.len() != db.len() {
        return false;
    }
    let sorted = |x: &[u32]| {
        let mut v = x.to_vec();
        v.sort_unstable();
        v
    };
    let ia: Vec<Vec<u32>> = da.iter().map(|&u| sorted(a.node_inputs(u))).collect();
    let ib: Vec<Vec<u32>> = db.iter().map(|&u| sorted(b.node_inputs(u))).collect();
    fn search(
        i: usize,
        image: &mut Vec<usize>,
        used: &mut Vec<bool>,
        ok: &dyn Fn(&[usize]) -> bool,
        fits: &dyn Fn(usize, usize) -> bool,
    ) -> bool {
        if i == used.len() {
            return ok(image);
        }
        for j in 0..used.len() {
            if !used[j] && fits(i, j) {
                used[j] = true;
                image.push(j);
                if search(i + 1, image, used, ok, fits) {
                    return true;
                }
                image.pop();
                used[j] = false;
            }
        }
        false
    }
    let fits = |i: usize, j: usize| ia[i] == ib[j] && ((da[i] == v1) == (db[j] == v2));
    let ok = |image: &[usize]| {
        (0..da.len())
            .all(|x| (0..da.len()).all(|y| aa.class_le(da[x], da[y]) == ab.class_le(db[image[x]], db[image[y]])))
    };
    search(0, &mut Vec::new(), &mut vec![false; da.len()], &ok, &fits)
}

#[test]
fn equivalence_with_repeated_inputs_matches_brute_force() {
    let mut rng = SplitMix64::new(2024);
    let mut ambiguous_pairs = 0;
    for round in 0..300 {
        let mut f = Family::new(format!("repeated {round}"));
        for t in 0..2 + rng.below(3) {
            let m = 1 + rng.below(7);
            let ins: Vec<Vec<&str>> = (0..m)
                .map(|_| (0..1 + usize::from(rng.next_f64() < 0.2)).map(|_| ["w_0", "w_1"][rng.below(2)]).collect())
                .collect();
            let reads: Vec<Vec<usize>> = (0..m).map(|j| (0..j).filter(|_| rng.next_f64() < 0.45).collect()).collect();
            let nodes: Vec<(&[&str], &[usize])> = (0..m).map(|j| (&ins[j][..], &reads[j][..])).collect();
            let task = dag_task(&mut f, &format!("T{t}"), &nodes, Some((m - 1, "w_2")));
            f.push(task).unwrap();
        }
        if round % 3 == 0 {
            // Plant the pattern keys cannot decide: two copies of x below a and b, versus one.
            let pick = |rng: &mut SplitMix64| ["w_0", "w_1"][rng.below(2)];
            let (x, a, b, v) = (pick(&mut rng), pick(&mut rng), pick(&mut rng), pick(&mut rng));
            let two = dag_task(
                &mut f,
                "two",
                &[(&[x], &[]), (&[x], &[]), (&[a], &[0]), (&[b], &[1]), (&[v], &[2, 3])],
                Some((4, "w_2")),
            );
            let one =
                dag_task(&mut f, "one", &[(&[x], &[]), (&[a], &[0]), (&[b], &[0]), (&[v], &[1, 2])], Some((3, "w_2")));
            f.push(two).unwrap();
            f.push(one).unwrap();
        }
        let d = derive(&f).unwrap();
        assert_eq!(d.report().undecided, 0);
        assert_sound_masks(&d);
        let all: Vec<(usize, usize)> =
            (0..d.diagrams().len()).flat_map(|t| (0..d.diagrams()[t].node_count()).map(move |v| (t, v))).collect();
        for &x in &all {
            for &y in &all {
                let merged = d.node_class()[x.0][x.1] == d.node_class()[y.0][y.1];
                assert_eq!(merged, oracle_equivalent(&d, x, y), "round {round}: {x:?} {y:?}");
                let same_key = d.diagrams()[x.0].key(x.1) == d.diagrams()[y.0].key(y.1);
                if same_key && !merged {
                    ambiguous_pairs += 1;
                }
            }
        }
    }
    assert!(ambiguous_pairs > 0, "the generator must produce cases where keys alone are wrong");
}

#[test]
fn random_user_family_files_derive_like_the_same_tasks_built_directly() {
    let mut rng = SplitMix64::new(99);
    for round in 0..40 {
        let mut json_tasks = Vec::new();
        let mut direct = Family::new("direct");
        for t in 0..1 + rng.below(4) {
            let m = 1 + rng.below(5);
            let ins: Vec<String> = (0..m).map(|_| format!("w_{}", rng.below(4))).collect();
            let reads: Vec<Vec<usize>> = (0..m).map(|j| (0..j).filter(|_| rng.next_f64() < 0.5).collect()).collect();
            let label = format!("w_{}", 4 + rng.below(2));
            let nodes_json: Vec<String> = (0..m)
                .map(|j| {
                    let reads: Vec<String> = reads[j].iter().map(|r| format!("\"n{r}\"")).collect();
                    let labels = if j + 1 == m { format!(", \"labels\": [\"{label}\"]") } else { String::new() };
                    format!(
                        "{{\"id\": \"n{j}\", \"inputs\": [\"{}\"], \"reads\": [{}]{labels}}}",
                        ins[j],
                        reads.join(", ")
                    )
                })
                .collect();
            json_tasks.push(format!("{{\"name\": \"T{t}\", \"nodes\": [{}]}}", nodes_json.join(", ")));
            let ins_ref: Vec<[&str; 1]> = ins.iter().map(|s| [s.as_str()]).collect();
            let nodes: Vec<(&[&str], &[usize])> = (0..m).map(|j| (&ins_ref[j][..], &reads[j][..])).collect();
            let task = dag_task(&mut direct, &format!("T{t}"), &nodes, Some((m - 1, &label)));
            direct.push(task).unwrap();
        }
        let text = format!(
            "{{\"format\": \"hasseflow-family\", \"version\": 1, \"name\": \"r{round}\", \"tasks\": [{}]}}",
            json_tasks.join(", ")
        );
        let parsed = parse_family(text.as_bytes()).unwrap();
        let (a, b) = (derive(&parsed).unwrap(), derive(&direct).unwrap());
        assert_sound_masks(&a);
        assert_eq!(a.dense(), b.dense(), "round {round}");
        assert_eq!(a.position_texts(), b.position_texts());
        assert_eq!(a.label_texts(), b.label_texts());
        let (ra, rb) = (a.report(), b.report());
        assert_eq!(
            (ra.nodes_before, ra.nodes_after, ra.consistent, ra.minimal),
            (rb.nodes_before, rb.nodes_after, rb.consistent, rb.minimal)
        );
    }
}

#[test]
fn mutated_family_files_never_panic() {
    let base = include_str!("../../../tests/data/family_example.json").as_bytes().to_vec();
    let mut rng = SplitMix64::new(5);
    let alphabet = b"{}[]\",:.01mw_@'x nodesreadsinputslabels-9";
    let mut accepted = 0;
    for round in 0..3000 {
        let mut bytes = base.clone();
        for _ in 0..1 + rng.below(4) {
            let i = rng.below(bytes.len().max(1));
            match rng.below(3) {
                0 if !bytes.is_empty() => {
                    bytes.remove(i.min(bytes.len() - 1));
                }
                1 => bytes.insert(i.min(bytes.len()), alphabet[rng.below(alphabet.len())]),
                _ => {
                    if let Some(b) = bytes.get_mut(i) {
                        *b = alphabet[rng.below(alphabet.len())];
                    }
                }
            }
        }
        if round % 10 == 0 {
            bytes = (0..rng.below(64)).map(|_| rng.below(256) as u8).collect();
        }
        match parse_family(&bytes) {
            Ok(f) => {
                accepted += 1;
                if let Ok(d) = derive(&f) {
                    assert_sound_masks(&d);
                    let _ = d.render_text();
                }
            }
            Err(e) => assert!(!e.to_string().is_empty() && !e.to_string().contains('\n')),
        }
    }
    assert!(accepted > 0, "some mutations stay valid");
}

/// The THEORY §8 tables, from the shared vector file (one source of truth for tests).
fn vector_mask(name: &str) -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/masks.json");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("vector file")).expect("vector JSON");
    let case = doc["cases"].as_array().expect("cases").iter().find(|c| c["name"] == name).expect("named case");
    serde_json::from_value(case["mask"].clone()).expect("rows")
}
