//! `--models`: the structured reach engine (`hasseflow_core::reach`) on three real models' layer
//! patterns at their target sizes (all layers, exact, the whole report including the limit's
//! structure), and the same stacks at n = 8192 against the dense engine (`LayerStack::analyze`,
//! one boolean product per layer). `--memory`: the runs' memory estimate against the measured peak.

use std::time::Duration;

use hasseflow_core::model::{ModelRun, load_gallery};
use hasseflow_core::pattern::{LayerKind, ModelSpec, Overlays, Packing};
use hasseflow_core::reach::model_run_bytes;
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
        encoder: None,
        notes: Vec::new(),
        packing: Default::default(),
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

/// Prints the memory table: for each run, the estimate `hasseflow model` refuses by and the peak
/// heap of `ModelRun::compute` (from the stack to the report), measured by the counting
/// allocator. Panics if an estimate is below its peak.
pub fn memory_table(only: Option<&str>) {
    println!("| model | n | overlays | queries | estimate MiB | peak MiB | estimate / peak | peak B / position |");
    println!("|---|---|---|---|---|---|---|---|");
    let docs = |n: u64, len: u64| vec![len; (n / len) as usize];
    let sinks = Overlays { sinks: 4, ..Overlays::default() };
    // Documents of 1 to 40 positions (lookbacks that turn plain in every layer).
    let mut rng = hasseflow_core::rng::SplitMix64::new(19);
    let mut ragged = Vec::new();
    let mut left = 1u64 << 22;
    while left > 0 {
        let d = (1 + rng.below(40) as u64).min(left);
        ragged.push(d);
        left -= d;
    }
    let cases: Vec<(&str, u64, &str, Overlays, usize)> = vec![
        ("llama-4-scout-17b-16e", 1 << 20, "none", Overlays::default(), 0),
        ("llama-4-scout-17b-16e", 1 << 24, "none", Overlays::default(), 0),
        ("llama-4-scout-17b-16e", 1 << 26, "none", Overlays::default(), 0),
        ("mistral-7b-v0.1", 1 << 24, "none", Overlays::default(), 0),
        ("gemma-3-27b-it", 1 << 24, "none", Overlays::default(), 1),
        ("modernbert-base", 1 << 24, "none", Overlays::default(), 0),
        ("qwen3-next-80b-a3b", 1 << 24, "none", Overlays::default(), 0),
        ("gemma-3-27b-it", 1 << 20, "256 heatmap rows", Overlays::default(), 256),
        (
            "gemma-3-27b-it",
            1 << 20,
            "docs 1024 x 1024",
            Overlays { docs: docs(1 << 20, 1024), ..Overlays::default() },
            256,
        ),
        ("gemma-3-27b-it", 1 << 20, "docs 262144 x 4", Overlays { docs: docs(1 << 20, 4), ..Overlays::default() }, 256),
        ("longformer-base-4096", 1 << 22, "ragged docs 1-40", Overlays { docs: ragged, ..Overlays::default() }, 0),
        ("gpt-oss-20b", 1 << 16, "sinks 4 (general path)", sinks, 1),
    ];
    for (name, n, what, overlays, queries) in cases {
        if only.is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let mut spec = load_gallery(name).expect("gallery model");
        // The documents' path of the engine, as a model that detects packing runs it (Longformer's
        // own masks ignore packed position ids: its runs with documents skip that path).
        spec.packing = Packing::Detected;
        let estimate = model_run_bytes(spec.layers.len(), n, &overlays, queries);
        let rows: Vec<u64> = (0..queries as u64).map(|i| i * (n / queries.max(1) as u64)).collect();
        let (_, peak, run) = measure(1, || {
            ModelRun::compute(name.into(), spec.clone(), n, overlays.clone(), &rows).expect("model runs")
        });
        drop(run);
        println!(
            "| {name} | {n} | {what} | {queries} | {} | {} | {:.2} | {:.1} |",
            mib(estimate as usize),
            mib(peak),
            estimate as f64 / peak as f64,
            peak as f64 / n as f64
        );
        assert!(estimate as usize >= peak, "{name} at {n} ({what}): estimate {estimate} below the peak {peak}");
    }
}
