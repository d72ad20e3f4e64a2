//! Prints how long each layout engine takes on Hasse diagrams of growing size (random causal DAGs
//! and a chain), to choose `LayoutOptions::layout_rs_limit`. Run:
//! `cargo run -p hasseflow-render --example layout_time [sizes...]`.

use std::time::Instant;

use hasseflow_core::presets::build_preset;
use hasseflow_core::{Analysis, BitMatrix};
use hasseflow_render::{Engine, HasseInput, LayoutOptions, layout};

fn main() {
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![60, 120, 250, 500] } else { sizes };
    println!(
        "{:<28} {:>6} {:>6} {:>8} {:>12} {:>12}",
        "mask", "nodes", "edges", "lowered", "layout-rs ms", "layered ms"
    );
    for &n in &sizes {
        let p = if n <= 60 { "0.05" } else { "0.02" };
        let params = [("p", p), ("causal", "true"), ("seed", "3")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let random = build_preset("random", n, &params, 8192).unwrap_or_else(|_| BitMatrix::identity(n));
        let chain = BitMatrix::from_fn(n, |q, k| k <= q && q - k < 2);
        for (name, m) in [(format!("random causal p={p} n={n}"), random), (format!("window w=2 n={n}"), chain)] {
            let a = Analysis::new(&m);
            let input = HasseInput::from_analysis(&a, None);
            let time = |engine| {
                let t = Instant::now();
                let s = layout(&input, &LayoutOptions { engine, ..LayoutOptions::default() });
                assert_eq!(s.nodes.len(), a.classes().len());
                t.elapsed().as_secs_f64() * 1e3
            };
            let (rs, layered) = (time(Engine::LayoutRs), time(Engine::Layered));
            let lowered = hasseflow_render::lowered_size(&input);
            println!(
                "{name:<28} {:>6} {:>6} {lowered:>8} {rs:>12.1} {layered:>12.1}",
                a.classes().len(),
                a.hasse_edges().len()
            );
        }
    }
}
