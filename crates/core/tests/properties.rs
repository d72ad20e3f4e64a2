//! Property tests against naive oracles, over seeded random masks of many sizes and densities
//! (sizes cross the 64-bit word boundary). Each property names its oracle.

use hasseflow_core::format::{Encoding, MaskFile, Provenance, parse_mask_file, write_grid, write_json};
use hasseflow_core::rng::SplitMix64;
use hasseflow_core::{
    Analysis, BitMatrix, ClassWiring, CoverWiring, FirstReach, Layer, LayerStack, SparsifyOptions, StackMode,
    reach_after, sparsify,
};

/// Random masks: sizes 1..=80, densities from very sparse to dense, some with planted cycles.
fn random_masks(count: usize, seed: u64) -> Vec<BitMatrix> {
    let mut rng = SplitMix64::new(seed);
    (0..count)
        .map(|i| {
            let n = 1 + rng.below(80);
            let p = [0.0, 0.01, 0.03, 0.08, 0.2, 0.5][i % 6];
            let causal_bias = i % 3 == 0;
            BitMatrix::from_fn(n, |q, k| {
                let x = rng.next_f64();
                if causal_bias && k > q { x < p / 10.0 } else { x < p }
            })
        })
        .collect()
}

/// Oracle: reachability by depth-first search from each query over the "reads" edges.
fn dfs_closure(m: &BitMatrix) -> BitMatrix {
    let n = m.n();
    let mut out = BitMatrix::zeros(n);
    for q in 0..n {
        let mut stack = vec![q];
        out.set(q, q, true);
        while let Some(v) = stack.pop() {
            for k in m.row_ones(v) {
                if !out.get(q, k) {
                    out.set(q, k, true);
                    stack.push(k);
                }
            }
        }
    }
    out
}

/// Oracle: BFS distances from each query.
fn bfs_layers(m: &BitMatrix) -> Vec<Vec<Option<usize>>> {
    let n = m.n();
    (0..n)
        .map(|q| {
            let mut d = vec![None; n];
            d[q] = Some(0);
            let mut frontier = vec![q];
            let mut layer = 0;
            while !frontier.is_empty() {
                layer += 1;
                let mut next = Vec::new();
                for v in frontier {
                    for k in m.row_ones(v) {
                        if d[k].is_none() {
                            d[k] = Some(layer);
                            next.push(k);
                        }
                    }
                }
                frontier = next;
            }
            d
        })
        .collect()
}

/// Oracle: covering pairs by brute force over the class order.
fn brute_hasse(a: &Analysis) -> Vec<(usize, usize)> {
    let c = a.classes().len();
    let lt = |x: usize, y: usize| x != y && a.class_le(x, y);
    let mut edges = Vec::new();
    for x in 0..c {
        for y in 0..c {
            if lt(x, y) && !(0..c).any(|z| lt(x, z) && lt(z, y)) {
                edges.push((x, y));
            }
        }
    }
    edges
}

#[test]
fn closure_matches_dfs() {
    for m in random_masks(300, 1) {
        let a = Analysis::new(&m);
        assert_eq!(a.closure(), &dfs_closure(&m), "mask {m:?}");
    }
}

#[test]
fn classes_are_mutual_reachability() {
    for m in random_masks(200, 2) {
        let a = Analysis::new(&m);
        let r = a.closure();
        for q in 0..m.n() {
            for k in 0..m.n() {
                let same = a.class_of()[q] == a.class_of()[k];
                assert_eq!(same, r.get(q, k) && r.get(k, q), "mask {m:?} ({q},{k})");
            }
        }
        // Classes sorted internally and by smallest member.
        let mins: Vec<usize> = a.classes().iter().map(|c| c[0]).collect();
        assert!(mins.windows(2).all(|w| w[0] < w[1]));
        assert!(a.classes().iter().all(|c| c.windows(2).all(|w| w[0] < w[1])));
    }
}

#[test]
fn classes_agree_with_petgraph_tarjan() {
    for m in random_masks(100, 9) {
        let mut g = petgraph::graph::DiGraph::<(), ()>::new();
        let nodes: Vec<_> = (0..m.n()).map(|_| g.add_node(())).collect();
        for q in 0..m.n() {
            for k in m.row_ones(q) {
                g.add_edge(nodes[k], nodes[q], ());
            }
        }
        let sccs = petgraph::algo::tarjan_scc(&g);
        assert_eq!(sccs.len(), Analysis::new(&m).classes().len(), "mask {m:?}");
    }
}

#[test]
fn hasse_matches_brute_force_covers() {
    for m in random_masks(200, 3) {
        let a = Analysis::new(&m);
        assert_eq!(a.hasse_edges(), brute_hasse(&a).as_slice(), "mask {m:?}");
        // Removing any Hasse edge changes the closure of the diagram; the diagram's closure is R.
        let hasse_mask = sparsify(&m, SparsifyOptions::default());
        assert_eq!(Analysis::new(&hasse_mask).closure(), a.closure());
    }
}

#[test]
fn depth_matches_power_iteration_and_first_reach_matches_bfs() {
    for m in random_masks(150, 4) {
        let a = Analysis::new(&m);
        let mut l = 0;
        let mut r = reach_after(&m, 0);
        loop {
            let next = reach_after(&m, l + 1);
            if next == r {
                break;
            }
            r = next;
            l += 1;
        }
        assert_eq!(a.depth(), l, "mask {m:?}");
        // Growth curve: |R(L)| for each L.
        for (layer, &count) in a.growth().iter().enumerate() {
            assert_eq!(count, reach_after(&m, layer).count_ones(), "growth at L={layer} for {m:?}");
        }
        let d = FirstReach::new(&m);
        let bfs = bfs_layers(&m.with_diagonal());
        for (q, expected) in bfs.iter().enumerate() {
            assert_eq!(&d.row(q).collect::<Vec<_>>(), expected, "first-reach row {q} of {m:?}");
        }
        assert_eq!(d.depth(), l);
        assert_eq!(d.growth(), a.growth(), "first-reach growth of {m:?}");
        let adopted = Analysis::new(&m).with_first_reach(&d);
        assert_eq!((adopted.depth(), adopted.growth()), (a.depth(), a.growth()));
        assert_eq!(a.is_dense(), l <= 1 && &m.with_diagonal() == a.closure());
    }
}

#[test]
fn sparsify_keeps_closure_and_hasse_in_every_variant() {
    for m in random_masks(150, 5) {
        let a = Analysis::new(&m);
        for classes in [ClassWiring::Clique, ClassWiring::Cycle] {
            for covers in [CoverWiring::AllPairs, CoverWiring::OneEdge] {
                let s = sparsify(&m, SparsifyOptions { classes, covers });
                let b = Analysis::new(&s);
                assert_eq!(b.closure(), a.closure(), "{classes:?}/{covers:?} {m:?}");
                assert_eq!(b.hasse_edges(), a.hasse_edges());
                assert!(s.count_ones() <= a.closure().count_ones());
            }
        }
        // Densify: one layer.
        let dense = Analysis::new(a.closure());
        assert!(dense.depth() <= 1 && dense.is_dense());
    }
}

#[test]
fn transpose_reverses_hasse_edges() {
    for m in random_masks(150, 6) {
        let a = Analysis::new(&m);
        let t = Analysis::new(&m.transpose());
        assert_eq!(a.classes(), t.classes(), "same classes");
        let mut reversed: Vec<(usize, usize)> = a.hasse_edges().iter().map(|&(x, y)| (y, x)).collect();
        reversed.sort_unstable();
        assert_eq!(t.hasse_edges(), reversed.as_slice());
        assert_eq!(a.width(), t.width());
        assert_eq!(a.height(), t.height());
    }
}

#[test]
fn width_and_height_match_brute_force() {
    for m in random_masks(200, 7).into_iter().filter(|m| m.n() <= 14) {
        let a = Analysis::new(&m);
        let c = a.classes().len();
        let comparable = |x: usize, y: usize| a.class_le(x, y) || a.class_le(y, x);
        let mut best = 0;
        let mut longest = 0;
        for set in 0u32..(1 << c) {
            let members: Vec<usize> = (0..c).filter(|&i| set >> i & 1 == 1).collect();
            let pairs = || members.iter().flat_map(|&x| members.iter().map(move |&y| (x, y))).filter(|(x, y)| x != y);
            if pairs().all(|(x, y)| !comparable(x, y)) {
                best = best.max(members.len());
            }
            if pairs().all(|(x, y)| comparable(x, y)) {
                longest = longest.max(members.len());
            }
        }
        assert_eq!(a.width(), best, "width of {m:?}");
        assert_eq!(a.height(), longest, "height of {m:?}");
    }
}

#[test]
fn stacks_match_their_definitions() {
    let masks = random_masks(120, 8);
    for group in masks.chunks(3) {
        let n = group[0].n();
        let layers: Vec<Layer> =
            group.iter().map(|m| Layer { heads: vec![m.resized(n), m.resized(n).transpose()] }).collect();
        let stack = LayerStack::new(layers.clone()).expect("valid stack");
        // Once: R(K) = Ā_K ··· Ā_1 computed cell by cell.
        let mut r = BitMatrix::identity(n);
        for layer in &layers {
            let adj = layer.adjacency();
            r = BitMatrix::from_fn(n, |q, k| (0..n).any(|j| adj.get(q, j) && r.get(j, k)));
        }
        let once = stack.analyze(StackMode::Once);
        assert_eq!(once.limit, r);
        assert_eq!(*once.growth.last().expect("growth"), r.count_ones());
        // Repeat: the fixed point is the closure of the union of all layers.
        let union = layers.iter().map(Layer::adjacency).reduce(|a, b| a.or(&b)).expect("layers");
        assert_eq!(&stack.analyze(StackMode::Repeat).limit, Analysis::new(&union).closure());
        // Equal layers: the theory's special case.
        let same = LayerStack::new(vec![Layer::single(group[0].clone()); 1]).expect("stack");
        let rep = same.analyze(StackMode::Repeat);
        let a = Analysis::new(&group[0]);
        assert_eq!((&rep.limit, rep.depth), (a.closure(), a.depth()));
    }
}

#[test]
fn export_import_is_identity() {
    let mut rng = SplitMix64::new(11);
    for (i, m) in random_masks(120, 10).into_iter().enumerate() {
        let n = m.n();
        let mut file = MaskFile::new(m.clone());
        if i % 2 == 0 {
            file.labels = Some((0..n).map(|p| format!("<img src=x onerror=alert({p})> \"é\"")).collect());
        }
        if i % 3 == 0 {
            file.provenance = Some(Provenance {
                preset: "random".into(),
                n,
                params: [("seed".to_string(), serde_json::json!(rng.below(100)))].into(),
            });
        }
        if i % 4 == 0 {
            let layers = vec![Layer::single(m.clone()), Layer { heads: vec![m.transpose(), m.not()] }];
            let mode = if i % 8 == 0 { StackMode::Repeat } else { StackMode::Once };
            file.stack = Some((LayerStack::new(layers).expect("stack"), mode));
        }
        for enc in [Encoding::Auto, Encoding::Rows, Encoding::Packed] {
            let text = write_json(&file, enc);
            assert_eq!(parse_mask_file(text.as_bytes()).expect("own output parses"), file, "{enc:?}");
        }
        assert_eq!(parse_mask_file(write_grid(&m).as_bytes()).expect("grid").mask, m);
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = SplitMix64::new(12);
    let seeds: [&[u8]; 4] = [
        b"{\"format\":\"hasseflow-mask\",\"version\":1,\"n\":3,\"rows\":[\"1..\",\"11.\",\"111\"]}",
        b"1..\n11.\n111\n",
        b"{\"format\":\"hasseflow-mask\",\"version\":1,\"n\":2,\"packed\":\"Dw==\",\"stack\":{\"layers\":[{\"heads\":[{\"rows\":[\"1.\",\"11\"]}]}]}}",
        b"{}",
    ];
    for round in 0..20_000 {
        let mut bytes: Vec<u8> = seeds[round % seeds.len()].to_vec();
        // Mutate: flip, insert, delete, truncate.
        for _ in 0..1 + rng.below(4) {
            let len = bytes.len().max(1);
            match rng.below(4) {
                0 if !bytes.is_empty() => {
                    let i = rng.below(bytes.len());
                    bytes[i] = rng.next_u64() as u8;
                }
                1 => {
                    let i = rng.below(len);
                    bytes.insert(i.min(bytes.len()), b"{}[]\",:01.n9 -"[rng.below(14)]);
                }
                2 if !bytes.is_empty() => {
                    let i = rng.below(bytes.len());
                    bytes.remove(i);
                }
                _ => bytes.truncate(rng.below(len)),
            }
        }
        let _ = parse_mask_file(&bytes);
    }
    // And pure noise.
    for _ in 0..2_000 {
        let bytes: Vec<u8> = (0..rng.below(200)).map(|_| rng.next_u64() as u8).collect();
        let _ = parse_mask_file(&bytes);
    }
}
