//! `--flow`: the full flow computation (unperturbed forward + `n` perturbed copies, all layers)
//! on the core's CPU path and on the GPU path (hasseflow-gpu) in the same run, causal mask,
//! `d_model` 64, 4 heads, 8 layers; plus the target row (CPU, n = 64, `d_model` 32, 4 layers).

use std::time::{Duration, Instant};

use hasseflow_core::BitMatrix;
use hasseflow_core::flow::{FlowConfig, FlowMasks, FlowModel, FlowReport, cpu};
use hasseflow_gpu::GpuFlow;

fn best<T>(reps: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        let out = f();
        best = best.min(t.elapsed());
        last = Some(out);
    }
    (best, last.expect("at least one run"))
}

fn secs(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64())
}

/// Prints the flow table for the given sizes.
pub fn flow_table(sizes: &[usize], reps: usize) {
    let t = Instant::now();
    let gpu = match GpuFlow::new_blocking() {
        Ok(g) => Some(g),
        Err(e) => {
            println!("GPU path unavailable: {e}");
            None
        }
    };
    let setup = t.elapsed();
    if let Some(g) = &gpu {
        // One untimed tiny run: drivers such as lavapipe compile each kernel at its first use.
        let config = FlowConfig { d_model: 16, heads: 1, layers: 1, seed: 0 };
        let model = FlowModel::new(config, 4).expect("valid warm-up config");
        let _ = g.run_blocking(&model, &FlowMasks::uniform(&BitMatrix::ones(4), &config));
        let a = g.adapter();
        println!(
            "GPU adapter: {} ({}, device type {}{}); device + kernels set up in {} s",
            a.name,
            a.api,
            a.device_type,
            if a.software { ", software" } else { "" },
            secs(setup)
        );
    }
    println!(
        "causal mask; times are the best of {reps}; 'exact' = influence support and rollout equal R(L) in every layer"
    );
    println!();
    println!("| N | d_model | heads | layers | CPU s | GPU s | GPU / CPU | CPU exact | GPU exact |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut rows = vec![(64usize, FlowConfig { d_model: 32, heads: 4, layers: 4, seed: 0 })];
    rows.extend(sizes.iter().map(|&n| (n, FlowConfig { d_model: 64, heads: 4, layers: 8, seed: 0 })));
    for (n, config) in rows {
        let mask = BitMatrix::from_fn(n, |q, k| k <= q);
        let model = FlowModel::new(config, n).expect("benchmark config is valid");
        let masks = FlowMasks::uniform(&mask, &config);
        let (cpu_time, cpu_raw) = best(reps, || cpu::run_flow(&model, &masks));
        let cpu_exact = FlowReport::new(&cpu_raw, &masks).exact();
        let (gpu_time, gpu_exact) = match &gpu {
            Some(g) => {
                let (t, raw) = best(reps, || g.run_blocking(&model, &masks));
                match raw {
                    Ok(raw) => (Some(t), Some(FlowReport::new(&raw, &masks).exact())),
                    Err(e) => {
                        println!("GPU run failed at n = {n}: {e}");
                        (None, None)
                    }
                }
            }
            None => (None, None),
        };
        let show = |x: Option<String>| x.unwrap_or_else(|| "-".into());
        println!(
            "| {n} | {} | {} | {} | {} | {} | {} | {} | {} |",
            config.d_model,
            config.heads,
            config.layers,
            secs(cpu_time),
            show(gpu_time.map(secs)),
            show(gpu_time.map(|g| format!("{:.2}", g.as_secs_f64() / cpu_time.as_secs_f64()))),
            cpu_exact,
            show(gpu_exact.map(|e| e.to_string())),
        );
    }
}
