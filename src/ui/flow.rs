//! The Flow view: a random Transformer runs the mask (WebGPU through `hasseflow-gpu`, or the
//! core's CPU path compiled to wasm) and the measured influence after layer `L` is drawn beside
//! the theory's `R(L)`, disagreements marked.
//!
//! Runs are asynchronous and never block painting: the GPU path awaits the device, the CPU path
//! awaits the page's Web Workers ([`workers`]: the unperturbed pass and ranges of perturbed copies
//! on every core, put together bit for bit as one thread would measure), and the measurements are
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

use hasseflow_core::flow::{CompareJob, FlowMasks, FlowModel, FlowOutput, FlowRaw};
use hasseflow_gpu::GpuFlow;
use yew::prelude::*;

use super::{io, job};
use crate::state::{
    Action, AdapterSeen, BackendChoice, BackendPlan, FlowAction, FlowKey, FlowRequest, FlowRun, plan_backend,
};
pub use panel::FlowPanel;

/// Delay before a run starts, so a burst of edits (undo held down) starts one run, not many.
const DEBOUNCE_MS: u32 = 120;

/// The browser's WebGPU device, opened once per page and shared by every run.
pub enum GpuSlot {
    /// Not asked for yet.
    Untried,
    /// Opened, kernels compiled.
    Ready(Rc<GpuFlow>),
    /// No adapter or no device; the reason, shown in the UI.
    Unavailable(String),
}

/// The slot as the app holds it.
pub type SharedGpu = Rc<RefCell<GpuSlot>>;

async fn gpu(slot: &SharedGpu) -> Result<Rc<GpuFlow>, String> {
    let known = match &*slot.borrow() {
        GpuSlot::Ready(g) => Some(Ok(g.clone())),
        GpuSlot::Unavailable(e) => Some(Err(e.clone())),
        GpuSlot::Untried => None,
    };
    if let Some(r) = known {
        return r;
    }
    let opened = if web_sys::window().is_some_and(|w| {
        js_sys::Reflect::get(&w.navigator(), &"gpu".into()).is_ok_and(|g| !g.is_undefined() && !g.is_null())
    }) {
        GpuFlow::new().await.map(Rc::new).map_err(|e| match e {
            hasseflow_gpu::GpuError::NoAdapter(_) => "the browser offers no WebGPU adapter".to_string(),
            e => e.to_string(),
        })
    } else {
        Err("this browser has no WebGPU (navigator.gpu is missing)".to_string())
    };
    *slot.borrow_mut() = match &opened {
        Ok(g) => GpuSlot::Ready(g.clone()),
        Err(e) => GpuSlot::Unavailable(e.clone()),
    };
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
    let built = FlowModel::new(key.config, req.source.n()).and_then(|m| Ok((m, req.source.masks(&key.config)?)));
    let (model, masks) = match built {
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
    let seen = gpu.as_ref().map(|g| AdapterSeen { name: g.adapter().name.clone(), software: g.adapter().software });
    let plan = plan_backend(key.backend, seen.as_ref().map_err(|e| e.as_str()));
    // The CPU measures in the page's Web Workers (with progress), or the GPU measures; then the
    // measurements are compared with R(L) here, in slices (rollout is `O(ones(A) · n)` a layer).
    let cpu = |note| on_cpu(&model, &masks, note, key, &cancel, &d);
    let measured = match (plan, gpu) {
        (BackendPlan::Fail(e), _) => return fail(e),
        (BackendPlan::Cpu { note }, _) => cpu(note).await,
        (BackendPlan::Gpu { fallback }, Ok(g)) => match g.run(&model, &masks).await {
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
    model: &FlowModel,
    masks: &FlowMasks,
    note: Option<String>,
    key: FlowKey,
    cancel: &Cell<bool>,
    d: &Callback<Action>,
) -> Result<(FlowRaw, Option<String>, usize), String> {
    let workers = workers::size();
    // The measurement's share of the run: (n + 1) passes of the layers, then the layers compared.
    let share = (masks.n() + 1) as f64 / (masks.n() + 2) as f64;
    match workers::measure(model, masks, workers, (key, share), cancel, d).await {
        Ok(Some(raw)) => Ok((raw, note, workers)),
        Ok(None) => Err("cancelled".into()),
        Err(e) => Err(format!("the CPU run's Web Workers failed: {e}")),
    }
}
