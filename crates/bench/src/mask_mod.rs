//! `--mask-mod`: the mask_mod interpreter's evaluation. Dense masks at n = 8192 by interval
//! analysis against cell-by-cell evaluation of the same traced graph (the obvious alternative),
//! and a packed-document mask from a 131072-token lookup tensor on the structured engine against
//! the closed form of the same documents. Asserts that each pair agrees.

use std::time::Duration;

use crate::clock;

use hasseflow_core::interop::mask_mod::MaskMod;
use hasseflow_core::pattern::{LayerKind, Overlays};
use hasseflow_core::reach::{ReachOptions, ReachStack, RuleLayer, StructuredLayer};
use hasseflow_core::rng::SplitMix64;

fn ms(t: Duration) -> f64 {
    (clock() - t).as_secs_f64() * 1e3
}

fn documents(n: u64, count: usize, seed: u64) -> Vec<u64> {
    let mut rng = SplitMix64::new(seed);
    let mut cuts: Vec<u64> = (0..count - 1).map(|_| 1 + rng.next_u64() % (n - 1)).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut out = Vec::new();
    let mut prev = 0;
    for c in cuts.into_iter().chain([n]) {
        out.push(c - prev);
        prev = c;
    }
    out
}

fn doc_text(lengths: &[u64]) -> String {
    format!(
        "import torch\nlengths = {lengths:?}\n\
         document_id = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))\n\
         def mask_mod(b, h, q_idx, kv_idx):\n    \
         return (document_id[q_idx] == document_id[kv_idx]) & (q_idx >= kv_idx)\n"
    )
}

pub(crate) fn run() {
    let n = 8192usize;
    let cases: Vec<(&str, String)> = vec![
        (
            "sliding window 256 (closed form)",
            "def mask_mod(b, h, q, kv):\n    return (kv <= q) & (q - kv < 256)\n".into(),
        ),
        ("40 documents, lookup tensor", doc_text(&documents(n as u64, 40, 1))),
        (
            "block table 64 x 64, lookup",
            "import torch\nB = 128\nt = torch.tril(torch.ones(64, 64, dtype=torch.bool))\nt[::3, :] = True\n\
             def mask_mod(b, h, q, kv):\n    return t[q // B, kv // B]\n"
                .into(),
        ),
        (
            "float distance (abs, division)",
            "def mask_mod(b, h, q, kv):\n    return (q - kv).abs() / 64.0 < 2.5\n".into(),
        ),
    ];
    println!("mask_mod evaluation, dense n = {n}: interval analysis vs cell by cell (same traced graph)");
    println!("{:<34} {:>10} {:>12} {:>14} {:>9}", "mask", "parse ms", "rows ms", "cellwise ms", "speed-up");
    for (name, text) in &cases {
        let t = clock();
        let m = MaskMod::parse(text).expect("the benchmark texts parse");
        let parse = ms(t);
        let t = clock();
        let fast = m.to_mask_at(n, 0, 0).expect("rows");
        let rows = ms(t);
        let t = clock();
        let slow = m.to_mask_cellwise_at(n, 0, 0).expect("cells");
        let cells = ms(t);
        assert_eq!(fast, slow, "{name}: the two evaluations differ");
        println!("{name:<34} {parse:>10.2} {rows:>12.1} {cells:>14.1} {:>8.1}x", cells / rows.max(1e-9));
    }
    let n: u64 = 131_072;
    let lengths = documents(n, 40, 5);
    let text = doc_text(&lengths);
    let t = clock();
    let m = MaskMod::parse(&text).expect("parse");
    let parse = ms(t);
    let t = clock();
    let rows = m.interval_rows(n, 0, 0).expect("rows");
    let rows_ms = ms(t);
    let t = clock();
    let got = ReachStack::new(n, vec![StructuredLayer::Intervals(rows); 4], Vec::new())
        .and_then(|s| s.run(&ReachOptions::default()))
        .expect("reach");
    let reach_ms = ms(t);
    let overlays = Overlays { docs: lengths.clone(), ..Overlays::default() };
    let t = clock();
    let layer = StructuredLayer::Rule(RuleLayer::new(LayerKind::Full, true, overlays));
    let want =
        ReachStack::new(n, vec![layer; 4], Vec::new()).and_then(|s| s.run(&ReachOptions::default())).expect("closed");
    let closed_ms = ms(t);
    assert_eq!(
        (got.growth.clone(), got.limit_cells, got.full_at),
        (want.growth.clone(), want.limit_cells, want.full_at)
    );
    assert_eq!(got.limit.classes, want.limit.classes);
    println!("\npacked documents at n = {n} (40 documents from a lookup tensor), 4 layers, structured engine");
    println!("{:<44} {:>10}", "step", "ms");
    println!("{:<44} {parse:>10.1}", "parse and run the module (131072-element tensor)");
    println!("{:<44} {rows_ms:>10.1}", "interval rows of the mask (131072 rows)");
    println!("{:<44} {reach_ms:>10.1}", "reach of 4 layers from those rows");
    println!("{:<44} {closed_ms:>10.1}", "closed form: 4 causal layers with documents");
    println!("equal reports: L* = {:?}, |limit| = {}", got.full_at, got.limit_cells);
}
