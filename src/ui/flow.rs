//! The Flow view: a random Transformer runs the mask (WebGPU through `hasseflow-gpu`, or the
//! core's CPU path compiled to wasm, both in the Flow view's Web Workers) and the measured
//! influence after layer `L` is drawn beside the theory's `R(L)`, disagreements marked.
//!
//! Runs are asynchronous and never block painting: the GPU path awaits the pool's GPU worker
//! (which holds the device: wgpu is not in the page's module), the CPU path awaits the page's Web
//! Workers ([`workers`]: the unperturbed pass and ranges of perturbed copies on every core, put
//! together bit for bit as one thread would measure), and the measurements are
//! compared with `R(L)` by the core's `CompareJob` through the views' one runner (`ui/job.rs`:
//! debounce, time slices, cancel). Each run is
//! started for a [`FlowKey`] and cancelled when the key changes (its effect's cleanup); whatever
//! it still reports is dropped by the reducer, which compares keys.
//!
//! The view itself is [`panel`] (settings, status, agreement) and [`maps`] (the two canvases'
//! pictures and legend).

mod maps;
mod panel;
mod workers;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use hasseflow_core::flow::{BackendInfo, CompareJob, FlowConfig, FlowMasks, FlowOutput, FlowRaw};
use hasseflow_core::flow_task::GpuAdapter;
use yew::prelude::*;

use super::{io, job};
use crate::state::{
    Action, AdapterSeen, BackendChoice, BackendPlan, FlowAction, FlowKey, FlowRequest, FlowRun, plan_backend,
};
pub use panel::FlowPanel;

/// Delay before a run starts, so a burst of edits (undo held down) starts one run, not many.
const DEBOUNCE_MS: u32 = 120;

/// The browser's WebGPU adapter, as the pool's GPU worker reported it once per page (the worker
/// keeps the device and its kernels).
pub enum GpuSlot {
    /// Not asked for yet.
    Untried,
    /// Opened, kernels compiled: the backend a GPU run reports.
    Ready(BackendInfo),
    /// No adapter or no device; the reason, shown in the UI.
    Unavailable(String),
}

/// The slot as the app holds it.
pub type SharedGpu = Rc<RefCell<GpuSlot>>;

async fn gpu(slot: &SharedGpu) -> Result<BackendInfo, String> {
    let known = match &*slot.borrow() {
        GpuSlot::Ready(g) => Some(Ok(g.clone())),
        GpuSlot::Unavailable(e) => Some(Err(e.clone())),
        GpuSlot::Untried => None,
    };
    if let Some(r) = known {
        return r;
    }
    // The worker's answer is kept for the page; a worker that did not answer is not (the next run
    // asks again, as the CPU workers' pool starts a new worker).
    let (kept, opened) = match workers::adapter().await? {
        GpuAdapter::Ready(g) => (GpuSlot::Ready(g.clone()), Ok(g)),
        GpuAdapter::Unavailable(e) => (GpuSlot::Unavailable(e.clone()), Err(e)),
    };
    *slot.borrow_mut() = kept;
    opened
}

/// Runs `req` and reports back through `d` (progress, then the result or the failure), unless
/// `cancel` is set first.
pub async fn run(req: FlowRequest, threshold: f64, slot: SharedGpu, cancel: Rc<Cell<bool>>, d: Callback<Action>) {
    if !job::debounce(DEBOUNCE_MS, &cancel).await {
        return;
    }
    let key = req.key;
    let fail = |error: String| d.emit(Action::Flow(FlowAction::Failed { key, error }));
    // The page checks the model and builds the masks; the workers make the weights.
    let built = key.config.check(req.source.n()).and_then(|()| req.source.masks(&key.config));
    let masks = match built {
        Ok(b) => b,
        Err(e) => return fail(e.to_string()),
    };
    d.emit(Action::Flow(FlowAction::Progress { key, progress: 0.0 }));
    let gpu = match key.backend {
        BackendChoice::Cpu => Err("CPU chosen".to_string()),
        _ => gpu(&slot).await,
    };
    if cancel.get() {
        return;
    }
    let start = io::now();
    let seen =
        gpu.as_ref().map(|g| AdapterSeen { name: g.adapter.clone().unwrap_or_default(), software: g.software_adapter });
    let plan = plan_backend(key.backend, seen.as_ref().map_err(|e| e.as_str()));
    // The CPU measures in the page's Web Workers (with progress), or the GPU measures; then the
    // measurements are compared with R(L) here, in slices (rollout is `O(ones(A) · n)` a layer).
    let cpu = |note| on_cpu(&key.config, &masks, note, key, &cancel, &d);
    let measured = match (plan, gpu) {
        (BackendPlan::Fail(e), _) => return fail(e),
        (BackendPlan::Cpu { note }, _) => cpu(note).await,
        (BackendPlan::Gpu { fallback }, Ok(g)) => match workers::on_gpu(&key.config, &masks, g).await {
            Ok(raw) => Ok((raw, None, 0)),
            Err(e) if fallback => cpu(Some(format!("CPU fallback: the WebGPU run failed ({e})"))).await,
            Err(e) => Err(format!("the WebGPU run failed: {e}")),
        },
        (BackendPlan::Gpu { .. }, Err(e)) => return fail(format!("WebGPU is not available: {e}")),
    };
    if cancel.get() {
        return;
    }
    let (raw, fallback, workers) = match measured {
        Ok(m) => m,
        Err(e) => return fail(e),
    };
    let compare = &mut CompareJob::new(raw, &masks, threshold);
    let Some(FlowOutput { raw, report }) = job::sliced(compare, &cancel, |_, _| {}).await else { return };
    let millis = io::now() - start;
    let run = FlowRun { raw: Rc::new(raw), report, millis, fallback, workers };
    d.emit(Action::Flow(FlowAction::Finished { key, run }));
}

/// The CPU path: the measurement in the page's Web Workers (`workers::measure`), with the note
/// that says why the CPU runs and the workers used. `Err` says why the workers could not measure
/// (the view shows it, with Retry); a cancelled run comes back as whatever it had (the caller
/// checks `cancel`).
async fn on_cpu(
    config: &FlowConfig,
    masks: &FlowMasks,
    note: Option<String>,
    key: FlowKey,
    cancel: &Cell<bool>,
    d: &Callback<Action>,
) -> Result<(FlowRaw, Option<String>, usize), String> {
    let workers = workers::size();
    // The measurement's share of the run: (n + 1) passes of the layers, then the layers compared.
    let share = (masks.n() + 1) as f64 / (masks.n() + 2) as f64;
    match workers::measure(config, masks, workers, (key, share), cancel, d).await {
        Ok(Some(raw)) => Ok((raw, note, workers)),
        Ok(None) => Err("cancelled".into()),
        Err(e) => Err(format!("the CPU run's Web Workers failed: {e}")),
    }
}
