//! The structured reach engine against the dense engine, cell for cell, over seeded random stacks
//! of every layer kind × direction × overlay, and random union-of-intervals masks; the report's
//! fields against dense oracles; test vectors; the dense builder against the Transformers fixture.

#[path = "support/job_contract.rs"]
mod job_contract;

use hasseflow_core::pattern::{LayerKind, Overlays};
use hasseflow_core::reach::{HasseNodeKind, ReachJob, ReachOptions, ReachReport};
use hasseflow_core::rng::SplitMix64;
use hasseflow_core::{Analysis, BitMatrix, IntervalRows, ReachError, ReachStack, RuleLayer, StructuredLayer};

/// Each position's image as Gemma 3 numbers them (`get_block_sequence_ids_for_mask`): every
/// contiguous run of image tokens is one image, `-1` for a text token.
fn image_groups(rule: &RuleLayer, n: usize) -> Vec<i64> {
    let image: Vec<bool> = (0..n)
        .map(|p| rule.overlays.images.iter().any(|&[s, l]| (s as usize..(s + l) as usize).contains(&p)))
        .collect();
    let mut group = -1;
    (0..n)
        .map(|p| {
            if image[p] && (p == 0 || !image[p - 1]) {
                group += 1;
            }
            if image[p] { group } else { -1 }
        })
        .collect()
}

/// Oracle: the documented meaning of a rule layer, written directly as a predicate (`groups`:
/// [`image_groups`]).
fn reads(rule: &RuleLayer, groups: &[i64], q: usize, k: usize) -> bool {
    let o = &rule.overlays;
    // (document index, document start) of a position; a linear layer ignores documents.
    let doc = |p: usize| {
        let mut start = 0usize;
        if !rule.kind.always_causal() {
            for (i, &len) in o.docs.iter().enumerate() {
                if p < start + len as usize {
                    return (i, start);
                }
                start += len as usize;
            }
        }
        (0, 0)
    };
    let causal = rule.causal || rule.kind.always_causal();
    // Positions restart at every document (Transformers' remap_positions_for_packed_sequence).
    let (dq, start) = doc(q);
    let (q, k) = (q - start, k.wrapping_sub(start));
    let base = match rule.kind {
        LayerKind::Full | LayerKind::Linear | LayerKind::Indexed => true,
        LayerKind::Conv { width } => (q as i64) - (width as i64) < k as i64,
        LayerKind::Pointwise => q == k,
        LayerKind::Sliding { window } => {
            let w = window as i64;
            let (q, k) = (q as i64, k as i64);
            if causal { q - w < k } else { q - w < k && k < q + w }
        }
        LayerKind::Chunked { size } => k / size as usize == q / size as usize,
    };
    let same_doc = doc(k.wrapping_add(start)).0 == dq;
    let dir = !causal || k <= q;
    let layer = base && dir && same_doc;
    // Images: OR-ed in, then the document's AND. A sliding layer's image term is remapped to the
    // document-relative positions with the rest of its function, and AND-ed with k > q - w.
    let same_image = |a: usize, b: usize| groups[a] >= 0 && groups[a] == groups[b];
    let image = same_doc
        && match rule.kind {
            LayerKind::Full | LayerKind::Indexed | LayerKind::Chunked { .. } => {
                same_image(q + start, k.wrapping_add(start))
            }
            LayerKind::Sliding { window } => same_image(q, k) && k as i64 > q as i64 - window as i64,
            LayerKind::Linear | LayerKind::Conv { .. } | LayerKind::Pointwise => false,
        };
    let sink = (k as u64) < o.sinks && same_doc && dir;
    let prefix = (q as u64) < o.prefix && (k as u64) < o.prefix && same_doc;
    let (q, k) = (q + start, k.wrapping_add(start));
    let global = o.globals.contains(&(q as u64)) || o.globals.contains(&(k as u64));
    layer || image || sink || prefix || global || q == k
}

fn random_docs(rng: &mut SplitMix64, n: usize) -> Vec<u64> {
    if n == 0 || rng.below(3) == 0 {
        return Vec::new();
    }
    let parts = 1 + rng.below(4.min(n));
    let mut cuts: Vec<usize> = (0..parts - 1).map(|_| 1 + rng.below(n.max(2) - 1)).collect();
    cuts.push(0);
    cuts.push(n);
    cuts.sort_unstable();
    cuts.dedup();
    cuts.windows(2).map(|w| (w[1] - w[0]) as u64).filter(|&l| l > 0).collect()
}

/// Up to three image spans `[start, length]`, in order, some touching (one image then).
fn random_images(rng: &mut SplitMix64, n: usize) -> Vec<[u64; 2]> {
    let mut out = Vec::new();
    let mut at = rng.below(n.max(1));
    for _ in 0..1 + rng.below(3) {
        let len = 1 + rng.below(n / 3 + 2);
        if at + len > n {
            break;
        }
        out.push([at as u64, len as u64]);
        at += len + [0, 1, 3, 9][rng.below(4)];
    }
    out
}

fn random_rule(rng: &mut SplitMix64, n: usize, docs: &[u64], images: &[[u64; 2]], plain: bool) -> RuleLayer {
    let kind = match rng.below(7) {
        0 => LayerKind::Full,
        1 => LayerKind::Sliding { window: 1 + rng.below(n / 2 + 3) as u64 },
        2 => LayerKind::Chunked { size: 1 + rng.below(n / 2 + 3) as u64 },
        3 => LayerKind::Conv { width: 1 + rng.below(5) as u64 },
        4 => LayerKind::Indexed,
        5 => LayerKind::Pointwise,
        _ => LayerKind::Linear,
    };
    let causal = rng.below(2) == 0;
    let mut overlays = Overlays::default();
    if rng.below(2) == 0 {
        overlays.docs = docs.to_vec();
    }
    if rng.below(2) == 0 {
        overlays.images = images.to_vec();
    }
    if !plain {
        if rng.below(3) == 0 {
            overlays.sinks = rng.below(4.min(n) + 1) as u64;
        }
        if rng.below(4) == 0 {
            overlays.globals = (0..1 + rng.below(3)).map(|_| rng.below(n) as u64).collect();
        }
        if rng.below(4) == 0 {
            overlays.prefix = rng.below(n / 4 + 1) as u64;
        }
    }
    RuleLayer::new(kind, causal, overlays)
}

fn random_intervals(rng: &mut SplitMix64, n: usize) -> IntervalRows {
    let rows: Vec<Vec<[u64; 2]>> = (0..n)
        .map(|q| {
            let mut v: Vec<[u64; 2]> = Vec::new();
            let count = rng.below(3);
            let mut at = 0usize;
            for _ in 0..count {
                if at >= n {
                    break;
                }
                let lo = at + rng.below((n - at).min(q + 8));
                if lo >= n {
                    break;
                }
                let hi = lo + rng.below((n - lo).min(6));
                v.push([lo as u64, hi as u64]);
                at = hi + 2;
            }
            v
        })
        .collect();
    IntervalRows::from_lists(n as u64, &rows).expect("valid rows")
}

fn random_stack(rng: &mut SplitMix64, n: usize) -> ReachStack {
    let docs = random_docs(rng, n);
    let images = if rng.below(3) == 0 { random_images(rng, n) } else { Vec::new() };
    let layers = 1 + rng.below(6);
    let plain = rng.below(3) == 0;
    let mode = rng.below(4);
    let layers = (0..layers)
        .map(|_| {
            if mode == 0 && rng.below(2) == 0 {
                StructuredLayer::Intervals(random_intervals(rng, n))
            } else {
                StructuredLayer::Rule(random_rule(rng, n, &docs, &images, plain))
            }
        })
        .collect();
    ReachStack::new(n as u64, layers, docs).expect("valid stack")
}

fn dense_layer(layer: &StructuredLayer, n: usize) -> BitMatrix {
    match layer {
        StructuredLayer::Rule(r) => {
            let groups = image_groups(r, n);
            BitMatrix::from_fn(n, |q, k| reads(r, &groups, q, k))
        }
        StructuredLayer::Intervals(rows) => rows.to_bitmatrix().with_diagonal(),
    }
}

/// Everything the report says, checked against dense computations.
fn check_stack(stack: &ReachStack, case: &str) {
    let n = stack.n();
    let adjs: Vec<BitMatrix> = stack.layers().iter().map(|l| dense_layer(l, n)).collect();
    for (i, (l, a)) in stack.layers().iter().zip(&adjs).enumerate() {
        assert_eq!(&l.to_bitmatrix(n).expect("small"), a, "{case}: dense builder of layer {}", i + 1);
    }
    let rows = stack.all_reach_rows().expect("runs");
    let mut dense = BitMatrix::identity(n);
    let mut dense_layers = vec![dense.clone()];
    assert_eq!(rows[0].to_bitmatrix(), dense, "{case}: R(0)");
    for (l, a) in adjs.iter().enumerate() {
        dense = a.bool_product(&dense);
        assert_eq!(rows[l + 1].to_bitmatrix(), dense, "{case}: R({})", l + 1);
        dense_layers.push(dense.clone());
    }
    // The limit: closure of the union of the layers.
    let union = adjs.iter().fold(BitMatrix::identity(n), |acc, a| acc.or(a));
    let an = Analysis::new(&union);
    let limit = an.closure();
    assert_eq!(&stack.limit_rows().expect("limit").to_bitmatrix(), limit, "{case}: limit");

    let queries: Vec<u64> = if n == 0 { vec![] } else { vec![0, (n / 2) as u64, n as u64 - 1] };
    let report = stack.run(&ReachOptions { queries: queries.clone(), max_hasse_nodes: 1 << 20 }).expect("run");
    check_report(&report, stack, &dense_layers, &an, &queries, case);
}

fn check_report(
    report: &ReachReport,
    stack: &ReachStack,
    dense_layers: &[BitMatrix],
    an: &Analysis,
    queries: &[u64],
    case: &str,
) {
    let n = stack.n();
    let limit = an.closure();
    let limit_cells = limit.count_ones() as u64;
    assert_eq!(report.limit_cells, limit_cells, "{case}: limit cells");
    let growth: Vec<u64> = dense_layers.iter().map(|m| m.count_ones() as u64).collect();
    assert_eq!(report.growth, growth, "{case}: growth");
    let full_at = growth.iter().position(|&c| c == limit_cells);
    assert_eq!(report.full_at, full_at, "{case}: full_at");
    let last = dense_layers.last().expect("R(0)");
    assert_eq!(report.shortfall.cells, limit_cells - last.count_ones() as u64, "{case}: shortfall");
    let short = (0..n).filter(|&q| last.row_count(q) < limit.row_count(q)).count() as u64;
    assert_eq!(report.shortfall.queries, short, "{case}: short queries");
    let doc_of = |p: usize| stack.documents().iter().position(|d| p as u32 <= d.1).expect("in a doc");
    for (l, lr) in report.layers.iter().enumerate() {
        let m = &dense_layers[l + 1];
        assert_eq!(lr.cells, m.count_ones() as u64, "{case}: layer {} cells", l + 1);
        let mut lbs: Vec<u64> =
            (0..n).map(|q| m.row_ones(q).map(|k| q.abs_diff(k) as u64).max().expect("diagonal")).collect();
        lbs.sort_unstable();
        if n > 0 {
            assert_eq!(
                (lr.lookback.min, lr.lookback.median, lr.lookback.max),
                (lbs[0], lbs[(n - 1) / 2], lbs[n - 1]),
                "{case}: layer {} lookback",
                l + 1
            );
        }
        let leaking = (0..n).filter(|&q| m.row_ones(q).any(|k| doc_of(k) != doc_of(q))).count() as u64;
        assert_eq!((lr.leaks, lr.leaking_queries), (leaking > 0, leaking), "{case}: layer {} leaks", l + 1);
        for (qr, &q) in lr.query_rows.iter().zip(queries) {
            let want: Vec<[u64; 2]> =
                hasseflow_core::analysis::position_runs(&m.row_ones(q as usize).collect::<Vec<_>>())
                    .iter()
                    .map(|&(a, b)| [a as u64, b as u64])
                    .collect();
            assert_eq!(qr.intervals, want, "{case}: layer {} query {q}", l + 1);
        }
    }
    // Structure.
    let st = &report.limit;
    assert_eq!(st.classes, Some(an.classes().len() as u64), "{case}: classes");
    let hasse = st.hasse.as_ref().expect("computed at small n");
    let inside: u64 = hasse.nodes.iter().filter(|v| v.kind == HasseNodeKind::Chain).map(|v| v.size - 1).sum();
    assert_eq!(inside + hasse.edge_count, an.hasse_edges().len() as u64, "{case}: Hasse edges");
    let positions: u64 = hasse.nodes.iter().map(|v| v.size).sum();
    assert_eq!(positions, n as u64, "{case}: nodes cover the positions");
    // Components: union-find over the closure's cells.
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], x: usize) -> usize {
        if p[x] != x {
            let r = find(p, p[x]);
            p[x] = r;
        }
        p[x]
    }
    for q in 0..n {
        for k in limit.row_ones(q) {
            let (a, b) = (find(&mut parent, q), find(&mut parent, k));
            parent[a] = b;
        }
    }
    let comps = (0..n).filter(|&q| find(&mut parent, q) == q).count() as u64;
    assert_eq!(st.components, comps, "{case}: components");
}

#[test]
fn rule_and_interval_stacks_match_the_dense_engine() {
    let mut rng = SplitMix64::new(0x005e_ed11);
    for case in 0..300 {
        let n = match case % 10 {
            0..=6 => 1 + rng.below(40),
            7 | 8 => 40 + rng.below(200),
            _ => 200 + rng.below(500),
        };
        let stack = random_stack(&mut rng, n);
        check_stack(&stack, &format!("case {case} n={n}"));
    }
}

/// Model-shaped stacks, as `ReachStack::from_model` builds them: every layer with the same
/// documents (or none, while the leak check keeps them, as for a model that ignores packing),
/// no other overlays, kinds from a small pool so that a full or chunked layer often follows
/// itself (the run skips the repeat: `Ā·Ā = Ā`) and rows reach their limit rows early (the run
/// stops moving and scanning them).
#[test]
fn model_shaped_stacks_with_repeats_and_saturated_rows_match_the_dense_engine() {
    let mut rng = SplitMix64::new(0x3131);
    for case in 0..120 {
        let n = 1 + rng.below(if case % 4 == 3 { 400 } else { 80 });
        let docs = random_docs(&mut rng, n);
        let applied = if rng.below(4) == 0 { Vec::new() } else { docs.clone() };
        let overlays = Overlays { docs: applied, ..Overlays::default() };
        let causal = rng.below(3) > 0;
        let pool = [
            LayerKind::Chunked { size: 1 + rng.below(n / 2 + 2) as u64 },
            LayerKind::Full,
            LayerKind::Sliding { window: 1 + rng.below(n / 3 + 2) as u64 },
            LayerKind::Linear,
        ];
        let mut layers = Vec::new();
        while layers.len() < 2 + rng.below(12) {
            let kind = pool[rng.below(pool.len())];
            for _ in 0..1 + rng.below(3) {
                layers.push(StructuredLayer::Rule(RuleLayer::new(kind, causal, overlays.clone())));
            }
        }
        let stack = ReachStack::new(n as u64, layers, docs).expect("valid stack");
        check_stack(&stack, &format!("model-shaped case {case} n={n}"));
    }
}

#[test]
fn large_random_stacks_match_the_dense_engine() {
    let mut rng = SplitMix64::new(77);
    for case in 0..4 {
        let n = 1024 + rng.below(1025);
        let stack = random_stack(&mut rng, n);
        check_stack(&stack, &format!("large case {case} n={n}"));
    }
}

/// Image spans (Gemma 3's `token_type_ids`) on model-shaped stacks: every layer has the same
/// images (often with packed documents), sliding layers mixed with full ones as in Gemma 3, in
/// both directions; every layer also once with chunked, recurrent and pointwise layers.
#[test]
fn image_spans_match_the_dense_engine() {
    let mut rng = SplitMix64::new(0x1a6e5);
    for case in 0..160 {
        let n = if case % 8 == 7 { 100 + rng.below(300) } else { 1 + rng.below(48) };
        let docs = random_docs(&mut rng, n);
        let overlays = Overlays {
            docs: if rng.below(3) == 0 { Vec::new() } else { docs.clone() },
            images: random_images(&mut rng, n),
            sinks: if rng.below(6) == 0 { 1 } else { 0 },
            ..Overlays::default()
        };
        let causal = rng.below(4) != 0;
        let window = 1 + rng.below(n / 2 + 2) as u64;
        let layers: Vec<StructuredLayer> = (0..1 + rng.below(7))
            .map(|i| {
                let kind = match (case % 5, i % 3) {
                    (4, 0) => LayerKind::Chunked { size: 1 + rng.below(n / 2 + 2) as u64 },
                    (4, 1) => [LayerKind::Linear, LayerKind::Pointwise, LayerKind::Indexed][rng.below(3)],
                    (_, 2) => LayerKind::Full,
                    _ => LayerKind::Sliding { window },
                };
                StructuredLayer::Rule(RuleLayer::new(kind, causal, overlays.clone()))
            })
            .collect();
        let stack = ReachStack::new(n as u64, layers, overlays.docs.clone()).expect("valid stack");
        check_stack(&stack, &format!("image case {case} n={n} {overlays:?}"));
    }
}

/// Image spans are checked: a zero length, an end past n and an overlap are refused by name;
/// spans that touch are one image (as a contiguous run of image tokens is in Transformers).
#[test]
fn image_spans_are_checked_and_touching_spans_are_one_image() {
    let layer = |images: Vec<[u64; 2]>| {
        let o = Overlays { images, ..Overlays::default() };
        ReachStack::new(10, vec![StructuredLayer::Rule(RuleLayer::new(LayerKind::Full, true, o))], Vec::new())
    };
    assert_eq!(layer(vec![[2, 0]]).unwrap_err(), ReachError::EmptyImage { index: 0 });
    let e = layer(vec![[1, 2], [8, 3]]).unwrap_err();
    assert_eq!(e.to_string(), "image span 8:3 ends at 11, past n = 10");
    let e = layer(vec![[5, 3], [1, 5]]).unwrap_err();
    assert_eq!(e.to_string(), "image spans 1:5 and 5:3 overlap");
    assert!(matches!(layer(vec![[u64::MAX, 2]]), Err(ReachError::ImageOutOfRange { .. })));
    let touching = layer(vec![[2, 3], [5, 2]]).unwrap().layer_rows(0).to_bitmatrix();
    let one = layer(vec![[2, 5]]).unwrap().layer_rows(0).to_bitmatrix();
    assert_eq!(touching, one);
    // Query 2 reads its whole image (2..=6), causal or not.
    assert_eq!(one.row_ones(2).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4, 5, 6]);
}

/// The steppable job gives the report `run` gives, one layer per step after the limit, and
/// counts its progress.
#[test]
fn a_stepped_job_reports_what_run_reports() {
    let mut rng = SplitMix64::new(0x0b5e);
    for case in 0..60 {
        let n = 1 + rng.below(120);
        let stack = random_stack(&mut rng, n);
        let queries: Vec<u64> = (0..3).map(|_| rng.below(n) as u64).collect();
        let options = ReachOptions { queries, ..ReachOptions::default() };
        let job = ReachJob::new(&stack, options.clone()).unwrap();
        let depth = stack.layers().len();
        assert_eq!(job.depth(), depth);
        // The limit (0 layers), then one layer per step, then the structure hands over the report.
        let (report, seen) = job_contract::drive(job, "reach job");
        assert_eq!(seen, (0..=depth).map(|d| (d, depth)).collect::<Vec<_>>(), "case {case}");
        assert_eq!(report.unwrap(), stack.run(&options).unwrap(), "case {case}");
    }
    let stack = random_stack(&mut rng, 10);
    let bad = ReachOptions { queries: vec![10], ..ReachOptions::default() };
    assert!(matches!(ReachJob::new(&stack, bad), Err(ReachError::QueryOutOfRange { query: 10, n: 10 })));
}

#[test]
fn random_interval_masks_repeated_match_the_dense_engine() {
    let mut rng = SplitMix64::new(4242);
    for case in 0..60 {
        let n = 1 + rng.below(120);
        let rows = random_intervals(&mut rng, n);
        let layers = 1 + rng.below(5);
        let stack =
            ReachStack::new(n as u64, vec![StructuredLayer::Intervals(rows); layers], Vec::new()).expect("valid");
        check_stack(&stack, &format!("interval case {case} n={n}"));
        // The Analysis path (structured growth) agrees with the dense first-reach sweep.
        let mask = stack.layers()[0].to_bitmatrix(n).expect("small");
        let a = Analysis::new(&mask);
        let d = hasseflow_core::FirstReach::new(&mask);
        assert_eq!((a.depth(), a.growth().to_vec()), (d.depth(), d.growth()), "interval case {case}: growth");
    }
}

#[test]
fn ten_packed_causal_documents_give_ten_chains() {
    let n = 131_072u64;
    let docs = vec![n / 10; 9].into_iter().chain([n - 9 * (n / 10)]).collect::<Vec<_>>();
    let overlays = Overlays { docs: docs.clone(), ..Overlays::default() };
    let layers = (0..4)
        .map(|i| {
            let kind = if i % 2 == 0 { LayerKind::Sliding { window: 512 } } else { LayerKind::Full };
            StructuredLayer::Rule(RuleLayer::new(kind, true, overlays.clone()))
        })
        .collect();
    let stack = ReachStack::new(n, layers, docs).expect("valid");
    let r = stack.run(&ReachOptions::default()).expect("runs");
    let h = r.limit.hasse.as_ref().expect("monotone");
    assert_eq!(h.node_count, 10);
    assert_eq!(h.edge_count, 0);
    assert!(h.nodes.iter().all(|v| v.kind == HasseNodeKind::Chain));
    assert_eq!(h.nodes[0].label, format!("0–{}", n / 10 - 1));
    assert_eq!(r.limit.components, 10);
    assert_eq!(r.limit.classes, Some(n));
    assert_eq!(r.full_at, Some(2));
    assert!(r.layers.iter().all(|l| !l.leaks));
}

#[test]
fn sliding_stack_full_at_matches_the_window_formula() {
    for (n, w) in [(1000u64, 10u64), (4096, 64), (777, 2), (131_072, 4096)] {
        let need = (n - 1).div_ceil(w - 1) as usize;
        let spec = hasseflow_core::pattern::ModelSpec {
            name: "mistral-like".into(),
            model_type: "mistral".into(),
            causal: true,
            layers: vec![LayerKind::Sliding { window: w }; need + 2],
            max_position_embeddings: None,
            encoder: None,
            notes: Vec::new(),
            packing: Default::default(),
        };
        let r = ReachStack::from_model(&spec, n, &Overlays::default()).expect("valid").run(&ReachOptions::default());
        let r = r.expect("runs");
        assert_eq!(r.full_at, Some(need), "n={n} w={w}");
        assert_eq!(r.limit_cells, n * (n + 1) / 2);
        assert_eq!(r.limit.hasse.as_ref().map(|h| h.node_count), Some(1));
        // One layer short: the shortfall is the last query rows.
        let short = ReachStack::from_model(
            &hasseflow_core::pattern::ModelSpec { layers: vec![LayerKind::Sliding { window: w }; need - 1], ..spec },
            n,
            &Overlays::default(),
        )
        .expect("valid")
        .run(&ReachOptions::default())
        .expect("runs");
        assert_eq!(short.full_at, None);
        assert!(short.shortfall.cells > 0 && short.shortfall.queries > 0);
    }
}

#[test]
fn a_layer_without_document_restriction_leaks() {
    let n = 64u64;
    let docs = vec![20, 20, 24];
    let within = Overlays { docs: docs.clone(), ..Overlays::default() };
    let layers = vec![
        StructuredLayer::Rule(RuleLayer::new(LayerKind::Sliding { window: 8 }, true, within.clone())),
        StructuredLayer::Rule(RuleLayer::new(LayerKind::Linear, false, Overlays::default())),
    ];
    let r = ReachStack::new(n, layers, docs.clone()).expect("valid").run(&ReachOptions::default()).expect("runs");
    assert!(!r.layers[0].leaks);
    assert!(r.layers[1].leaks);
    assert_eq!(r.layers[1].leaking_queries, 44);
    // A linear layer ignores documents even when its overlays name them (no reset of the state).
    let layers = vec![StructuredLayer::Rule(RuleLayer::new(LayerKind::Linear, true, within))];
    let r = ReachStack::new(n, layers, docs.clone()).expect("valid").run(&ReachOptions::default()).expect("runs");
    assert_eq!(r.layers[0].leaking_queries, 44);
    // Global tokens cross documents too.
    let global = Overlays { docs: docs.clone(), globals: vec![30], ..Overlays::default() };
    let layers = vec![StructuredLayer::Rule(RuleLayer::new(LayerKind::Full, true, global))];
    let r = ReachStack::new(n, layers, docs).expect("valid").run(&ReachOptions::default()).expect("runs");
    assert!(r.layers[0].leaks);
}

#[test]
fn errors_are_typed() {
    let bad = RuleLayer::new(LayerKind::Sliding { window: 0 }, true, Overlays::default());
    assert!(matches!(
        ReachStack::new(10, vec![StructuredLayer::Rule(bad)], vec![]),
        Err(ReachError::BadParameter { layer: 1, .. })
    ));
    assert!(matches!(ReachStack::new(10, vec![], vec![3, 3]), Err(ReachError::BadDocuments { .. })));
    assert!(matches!(ReachStack::new(1 << 33, vec![], vec![]), Err(ReachError::TooLarge { .. })));
    let g = Overlays { globals: vec![10], ..Overlays::default() };
    let layer = StructuredLayer::Rule(RuleLayer::new(LayerKind::Full, true, g));
    assert!(matches!(ReachStack::new(10, vec![layer], vec![]), Err(ReachError::OverlayOutOfRange { .. })));
    assert!(matches!(
        IntervalRows::from_lists(3, &[vec![[0, 1], [1, 2]], vec![], vec![]]),
        Err(ReachError::BadInterval { row: 0, index: 1, .. })
    ));
    // Not representable: a checkerboard row has n/2 intervals.
    let m = BitMatrix::from_fn(100, |q, k| (q + k) % 2 == 0);
    assert!(matches!(ReachStack::from_bitmatrix(&m, 2, 16), Err(ReachError::NotRepresentable { row: 0, .. })));
    let stack = ReachStack::new(10, vec![], vec![]).expect("valid");
    assert!(matches!(
        stack.run(&ReachOptions { queries: vec![10], ..ReachOptions::default() }),
        Err(ReachError::QueryOutOfRange { .. })
    ));
}

#[test]
fn report_serialises() {
    let stack = ReachStack::new(
        16,
        vec![StructuredLayer::Rule(RuleLayer::new(LayerKind::Chunked { size: 4 }, true, Overlays::default()))],
        vec![],
    )
    .expect("valid");
    let r = stack.run(&ReachOptions { queries: vec![5], ..ReachOptions::default() }).expect("runs");
    let json = serde_json::to_string(&r).expect("serialises");
    let back: ReachReport = serde_json::from_str(&json).expect("parses");
    assert_eq!(back, r);
    assert!(json.contains("\"full_at\":1"));
    assert_eq!(r.layers[0].query_rows[0].intervals, vec![[4, 5]]);
}

/// The dense builder of every rule kind equals the masks of the real `transformers.masking_utils`
/// (fixture written by tests/python/gen_layer_semantics.py from the installed library).
#[test]
fn dense_builder_matches_transformers_masking_utils() {
    #[derive(serde::Deserialize)]
    struct Case {
        name: String,
        n: usize,
        layer: RuleLayer,
        rows: Vec<String>,
    }
    #[derive(serde::Deserialize)]
    struct Fixture {
        transformers: String,
        cases: Vec<Case>,
    }
    let text = include_str!("fixtures/hf_layer_semantics.json");
    let fixture: Fixture = serde_json::from_str(text).expect("fixture parses");
    assert!(!fixture.transformers.is_empty());
    assert!(fixture.cases.len() >= 15);
    for case in &fixture.cases {
        let m = StructuredLayer::Rule(case.layer.clone()).to_bitmatrix(case.n).expect("small");
        assert_eq!(m.to_row_strings(), case.rows, "{} (transformers {})", case.name, fixture.transformers);
    }
}
