//! The `flow` subcommand: builds the core's flow model for a mask file, runs it on the chosen
//! backend (hasseflow-gpu or the core's CPU path), and prints the per-layer agreement with `R(L)`
//! and the timings. Every number comes from the core or the GPU crate; this module only measures
//! wall time and formats.

use std::time::Instant;

use anyhow::{Context, Result, bail};
use hasseflow_core::flow::{BackendKind, FlowConfig, FlowJob, FlowMasks, FlowModel, FlowSummary, INFLUENCE_THRESHOLD};
use hasseflow_core::job::{Job, Step};
use hasseflow_gpu::GpuFlow;
use serde_json::json;

use crate::{BackendArg, FlowArgs, print_out, progress, read_mask};

/// Milliseconds since `t`.
fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

pub(crate) fn flow_command(a: &FlowArgs) -> Result<()> {
    let file = read_mask(&a.input)?;
    let stack_layers = file.stack.as_ref().map(|(s, _)| s.layers().len());
    let layers = a.layers.or(stack_layers).unwrap_or(4);
    let config = FlowConfig { d_model: a.d_model, heads: a.heads, layers, seed: a.seed };
    let model = FlowModel::new(config, file.mask.n()).context("invalid flow model")?;
    let masks = match &file.stack {
        Some((stack, _)) => FlowMasks::from_stack(stack, &config).context("invalid flow model")?,
        None => FlowMasks::uniform(&file.mask, &config),
    };

    let t = Instant::now();
    let (gpu, gpu_error) = match a.backend {
        BackendArg::Cpu => (None, None),
        BackendArg::Gpu => (Some(GpuFlow::new_blocking().context("--backend gpu")?), None),
        BackendArg::Auto => match GpuFlow::new_blocking() {
            Ok(g) => (Some(g), None),
            Err(e) => (None, Some(e.to_string())),
        },
    };
    let setup_ms = ms(t);
    let t = Instant::now();
    let show = progress::wanted(a.json);
    let (raw, report, compute_ms, report_ms) = match &gpu {
        Some(g) => {
            // One submission per batch and one readback: no finer progress to show.
            let spinner = progress::spinner(show, "flow on the GPU");
            let raw = g.run_blocking(&model, &masks);
            spinner.finish_and_clear();
            let raw = raw.context("GPU flow run")?;
            let compute_ms = ms(t);
            let t = Instant::now();
            let out = FlowJob::compare(raw, &masks, INFLUENCE_THRESHOLD).run();
            (out.raw, out.report, compute_ms, ms(t))
        }
        None => {
            // The measurement and the comparison, one layer step at a time.
            let bar = progress::bar(show, 0, "flow, layer by layer");
            let mut job = FlowJob::new(&model, &masks, INFLUENCE_THRESHOLD);
            let mut follow = progress::follow(&bar);
            let mut measured = None;
            let out = loop {
                match job.step() {
                    Step::Progress { done, total } => {
                        follow(done, total);
                        if measured.is_none() && job.measured() {
                            measured = Some(Instant::now());
                        }
                    }
                    Step::Done(out) => break out,
                }
            };
            bar.finish_and_clear();
            let measured = measured.unwrap_or_else(Instant::now);
            let compute_ms = measured.duration_since(t).as_secs_f64() * 1e3;
            (out.raw, out.report, compute_ms, ms(measured))
        }
    };
    if raw.influence.iter().flatten().any(|x| !x.is_finite()) {
        bail!("the {} backend produced non-finite influences", raw.backend.kind);
    }

    let text = if a.json {
        let mut v = serde_json::to_value(FlowSummary::new(&raw, &report, config)).context("serialising the report")?;
        v["gpu_unavailable"] = json!(gpu_error);
        v["timings_ms"] = json!({"setup": setup_ms, "compute": compute_ms, "report": report_ms});
        let mut s = serde_json::to_string(&v).context("serialising the report")?;
        s.push('\n');
        s
    } else {
        let mut out = format!(
            "flow: n = {}, d_model {}, {} heads, {} layers, seed {}\n",
            report.n, config.d_model, config.heads, config.layers, config.seed
        );
        let backend = match (raw.backend.kind, &raw.backend.adapter, &raw.backend.api) {
            (BackendKind::Gpu, Some(name), Some(api)) => {
                let soft = if raw.backend.software_adapter { ", software adapter" } else { "" };
                format!("{} ({name}, {api}{soft})", BackendKind::Gpu)
            }
            (kind, ..) => kind.to_string(),
        };
        out.push_str(&format!("backend: {backend}\n"));
        if let Some(e) = &gpu_error {
            out.push_str(&format!("(no GPU: {e})\n"));
        }
        out.push_str(&format!("support: relative influence > {:e}; rollout: non-zero entries\n", report.threshold));
        out.push_str("layer  |R(L)|  support  agreement  false+  false-  min inside  rollout\n");
        for l in &report.layers {
            out.push_str(&format!(
                "{:>5}  {:>6}  {:>7}  {:>9.6}  {:>6}  {:>6}  {:>10.2e}  {:>7.6}\n",
                l.layer,
                l.reach,
                l.support,
                l.agreement,
                l.false_positives,
                l.false_negatives,
                l.min_inside,
                l.rollout_agreement
            ));
        }
        out.push_str(&format!(
            "timings: setup {setup_ms:.1} ms, compute {compute_ms:.1} ms (forward + {} perturbed copies, all layers), report {report_ms:.1} ms\n",
            report.n
        ));
        out
    };
    print_out(&text);
    Ok(())
}
