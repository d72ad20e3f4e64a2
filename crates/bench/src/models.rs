//! `--models`: the structured reach engine (`hasseflow_core::reach`) on three real models' layer
//! patterns at their target sizes (all layers, exact, the whole report including the limit's
//! structure), and the same stacks at n = 8192 against the dense engine (`LayerStack::analyze`,
//! one boolean product per layer).

use std::time::Duration;

use hasseflow_core::pattern::{LayerKind, ModelSpec, Overlays};
use hasseflow_core::{ReachOptions, ReachStack, StackMode};

use crate::{measure, mib, ms};

/// Dense products are `O(ones · n/64)` per layer (seconds at n = 8192 for wide windows), so the
/// dense engine runs on the first `DENSE_LAYERS` layers and its time is scaled to all layers.
const DENSE_LAYERS: usize = 4;

fn spec(name: &str, layers: Vec<LayerKind>) -> ModelSpec {
    ModelSpec {
        name: name.to_string(),
        model_type: name.to_string(),
        causal: true,
        layers,
        max_position_embeddings: None,
    }
}

/// The three target runs: (model, n, target ms).
fn models() -> Vec<(ModelSpec, u64, f64)> {
    let mistral = spec("Mistral 7B (32 x sliding 4096)", vec![LayerKind::Sliding { window: 4096 }; 32]);
    let gemma = spec(
        "Gemma-3-27B-like (62 = 5 sliding 1024 : 1 full)",
        (1..=62).map(|l| if l % 6 == 0 { LayerKind::Full } else { LayerKind::Sliding { window: 1024 } }).collect(),
    );
    let scout = spec(
        "Llama 4 Scout (48 = chunked 8192, every 4th full)",
        (1..=48).map(|l| if l % 4 == 0 { LayerKind::Full } else { LayerKind::Chunked { size: 8192 } }).collect(),
    );
    vec![(mistral, 131_072, 20.0), (gemma, 131_072, 50.0), (scout, 10_485_760, 2000.0)]
}

/// Prints the models table.
pub fn models_table(reps: usize, only: Option<&str>) {
    println!(
        "| model | n | layers | full_at | shortfall cells / queries | limit cells | Hasse nodes | structured ms | target ms | peak MiB | \
         structured ms @8192 | dense ms @8192 (all layers, est.) | dense / structured @8192 |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (model, n, target) in models() {
        if only.is_some_and(|o| !model.name.contains(o)) {
            continue;
        }
        let overlays = Overlays::default();
        let run = || {
            ReachStack::from_model(&model, n, &overlays)
                .and_then(|s| s.run(&ReachOptions::default()))
                .expect("model stack runs")
        };
        let (t, mem, report) = measure(reps, run);
        let small = ReachStack::from_model(&model, 8192, &overlays).expect("stack at 8192");
        let (t_small, _, small_report) = measure(reps, || small.run(&ReachOptions::default()).expect("runs"));
        // Dense: the first DENSE_LAYERS layers, checked against the structured growth.
        let head = ModelSpec { layers: model.layers[..DENSE_LAYERS.min(model.layers.len())].to_vec(), ..model.clone() };
        let dense_stack = ReachStack::from_model(&head, 8192, &overlays)
            .and_then(|s| s.to_layer_stack())
            .expect("dense stack at 8192");
        let (t_dense, _, dense) = measure(1, || dense_stack.analyze(StackMode::Once));
        let dense_cells = dense.limit.count_ones() as u64;
        assert_eq!(dense_cells, small_report.growth[head.layers.len()], "dense and structured agree on R(4)");
        let per_layer = t_dense.as_secs_f64() / head.layers.len() as f64;
        let dense_all = Duration::from_secs_f64(per_layer * model.layers.len() as f64);
        let hasse = report.limit.hasse.as_ref().map_or("-".to_string(), |h| h.node_count.to_string());
        println!(
            "| {} | {} | {} | {} | {} / {} | {} | {} | {} | {:.0} | {} | {} | {} | {:.0}x |",
            model.name,
            n,
            model.layers.len(),
            report.full_at.map_or("null".to_string(), |l| l.to_string()),
            report.shortfall.cells,
            report.shortfall.queries,
            report.limit_cells,
            hasse,
            ms(t),
            target,
            mib(mem),
            ms(t_small),
            ms(dense_all),
            dense_all.as_secs_f64() / t_small.as_secs_f64(),
        );
    }
    println!(
        "\nDense: `LayerStack::analyze` on the first {DENSE_LAYERS} layers at n = 8192 (one boolean product per \
         layer, the same cost for every layer), scaled to all layers; its R({DENSE_LAYERS}) is checked against \
         the structured growth."
    );
}
