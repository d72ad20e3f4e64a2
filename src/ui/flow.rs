//! The Flow view: a random Transformer runs the mask (WebGPU through `hasseflow-gpu`, or the
//! core's CPU path compiled to wasm) and the measured influence after layer `L` is drawn beside
//! the theory's `R(L)`, disagreements marked.
//!
//! Runs are asynchronous and never block painting: the GPU path awaits the device, the CPU path
//! steps the core's `FlowJob` (one layer of one pass at a time, then one compared layer) through
//! the views' one runner (`ui/job.rs`: debounce, time slices, progress, cancel). Each run is
//! started for a [`FlowKey`] and cancelled when the key changes (its effect's cleanup); whatever
//! it still reports is dropped by the reducer, which compares keys.
//!
//! The view itself is [`panel`] (settings, status, agreement) and [`maps`] (the two canvases'
//! pictures and legend).

mod maps;
mod panel;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use hasseflow_core::flow::{FlowJob, FlowModel, FlowOutput};
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

/// Runs `job` in slices, reporting its progress as a fraction when `report` (the CPU path; the
/// GPU path's comparison shows none); `None` when cancelled.
async fn sliced(
    job: &mut FlowJob<'_>,
    key: FlowKey,
    report: bool,
    cancel: &Cell<bool>,
    d: &Callback<Action>,
) -> Option<FlowOutput> {
    job::sliced(job, cancel, |done, total| {
        if report {
            d.emit(Action::Flow(FlowAction::Progress { key, progress: done as f64 / total.max(1) as f64 }));
        }
    })
    .await
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
    // One job and one runner for every path: the CPU measures (with progress), or the GPU's
    // measurements are compared (in slices too: rollout is `O(ones(A) · n)` a layer, no progress).
    let (mut flow_job, measuring, fallback) = match (plan, gpu) {
        (BackendPlan::Fail(e), _) => return fail(e),
        (BackendPlan::Cpu { note }, _) => (FlowJob::new(&model, &masks, threshold), true, note),
        (BackendPlan::Gpu { fallback }, Ok(g)) => match g.run(&model, &masks).await {
            Ok(raw) if !cancel.get() => (FlowJob::compare(raw, &masks, threshold), false, None),
            Ok(_) => return,
            Err(e) if fallback => (
                FlowJob::new(&model, &masks, threshold),
                true,
                Some(format!("CPU fallback: the WebGPU run failed ({e})")),
            ),
            Err(e) => return fail(format!("the WebGPU run failed: {e}")),
        },
        (BackendPlan::Gpu { .. }, Err(e)) => return fail(format!("WebGPU is not available: {e}")),
    };
    let out = sliced(&mut flow_job, key, measuring, &cancel, &d).await;
    let Some(FlowOutput { raw, report }) = out else { return };
    let millis = io::now() - start;
    d.emit(Action::Flow(FlowAction::Finished { key, run: FlowRun { raw: Rc::new(raw), report, millis, fallback } }));
}
