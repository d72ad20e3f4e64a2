//! The CPU path on every core: the flow run's unperturbed pass and its `n` perturbed copies are
//! sent, as one `core::flow_task` request and ranges of copies, to the pool of Web Workers that
//! `static/boot.js` keeps (`hasseflowFlow`: one worker a core, each running `crates/flow_worker`),
//! and their answers are put together into exactly the one-thread run's measurements. The main
//! thread only waits, so the page never blocks on the measurement. The comparison with `R(L)`
//! then runs in slices here, as for the GPU's measurements.
//!
//! The GPU path is one more worker of the same module (the pool's `gpu`), which opens the WebGPU
//! device on its first task and keeps it: [`adapter`] asks for it, [`on_gpu`] runs on it.

use std::cell::Cell;

use hasseflow_core::flow::{BackendInfo, FlowConfig, FlowMasks, FlowRaw};
use hasseflow_core::flow_task;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use yew::Callback;

use super::super::io::{function, why};
use crate::state::{Action, FlowAction, FlowKey};

/// Ranges of copies per worker: enough to keep every worker busy to the end and to show progress,
/// few enough that each pays little for its message.
const RANGES_PER_WORKER: usize = 4;

/// The page's pool (`static/boot.js`), when it has one.
fn pool() -> Option<JsValue> {
    js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("hasseflowFlow")).ok().filter(JsValue::is_object)
}

/// Calls `method` of the pool with `args`.
fn call(pool: &JsValue, method: &str, args: &[JsValue]) -> Result<JsValue, String> {
    let f = function(pool, method).ok_or_else(|| format!("the worker pool has no {method}()"))?;
    f.apply(pool, &args.iter().collect::<js_sys::Array>()).map_err(|e| why(&e))
}

/// The workers the pool runs (0 when the page has no pool).
pub fn size() -> usize {
    pool().and_then(|p| call(&p, "size", &[]).ok()).and_then(|n| n.as_f64()).map_or(0, |n| n as usize)
}

/// Queues one task of run `run` in the pool now; its answer is [`answer`]ed later.
fn start(
    (pool, run): (&JsValue, &JsValue),
    kind: &str,
    request: &str,
    start: usize,
    end: usize,
) -> Result<js_sys::Promise, String> {
    let args = [run.clone(), kind.into(), request.into(), (start as f64).into(), (end as f64).into()];
    call(pool, "run", &args)?.dyn_into::<js_sys::Promise>().map_err(|_| "the pool returned no promise".into())
}

/// A queued task's answer: its floats, or why the task failed.
async fn answer(task: Result<js_sys::Promise, String>) -> Result<Vec<f32>, String> {
    let out = JsFuture::from(task?).await.map_err(|e| why(&e))?;
    out.dyn_into::<js_sys::Float32Array>().map(|a| a.to_vec()).map_err(|_| "a worker answered no Float32Array".into())
}

/// The pool's GPU worker's task `kind` for `request`, answered.
async fn gpu_task(kind: &str, request: &str) -> Result<JsValue, String> {
    let pool = pool().ok_or("the page has no worker pool")?;
    let task = call(&pool, "gpu", &[kind.into(), request.into()])?
        .dyn_into::<js_sys::Promise>()
        .map_err(|_| "the pool returned no promise".to_string())?;
    JsFuture::from(task).await.map_err(|e| why(&e))
}

/// The GPU worker's adapter (its device opened on the first call), or why it has none.
///
/// # Errors
/// The worker did not answer (its module did not load, it did not start): in one line, and not
/// the browser's last word, so the next run asks again.
pub async fn adapter() -> Result<flow_task::GpuAdapter, String> {
    let json = gpu_task("adapter", "").await?.as_string().ok_or("the GPU worker answered no text")?;
    serde_json::from_str(&json).map_err(|e| format!("the GPU worker's adapter: {e}"))
}

/// Measures the model of `config` on `masks` on the GPU worker's device, which is `backend`: the
/// whole run in one task (`core::flow_task::whole_answer`).
///
/// # Errors
/// The run's failure on the device, or a malformed answer, in one line.
pub async fn on_gpu(config: &FlowConfig, masks: &FlowMasks, backend: BackendInfo) -> Result<FlowRaw, String> {
    let out = gpu_task("gpu", &flow_task::encode(config, masks)).await?;
    let floats = out.dyn_into::<js_sys::Float32Array>().map_err(|_| "the GPU worker answered no Float32Array")?;
    flow_task::raw_from_whole(config, masks, &floats.to_vec(), backend).map_err(|e| e.to_string())
}

/// Measures the model of `config` on `masks` in the pool's `workers` workers, reporting progress for `key`
/// through `d` (as a fraction of the whole run, of which the measurement is `share`).
/// `Ok(None)` when `cancel` is set first. Unless it measured, this run's tasks that no worker has
/// started are dropped.
///
/// # Errors
/// Why the pool could not measure (no pool, a worker that did not start, a malformed answer):
/// the run fails with it, and Retry tries again.
pub async fn measure(
    config: &FlowConfig,
    masks: &FlowMasks,
    workers: usize,
    (key, share): (FlowKey, f64),
    cancel: &Cell<bool>,
    d: &Callback<Action>,
) -> Result<Option<FlowRaw>, String> {
    let pool = pool().ok_or("the page has no worker pool")?;
    let run = call(&pool, "begin", &[])?;
    let measured = gather((&pool, &run), config, masks, workers, (key, share), cancel, d).await;
    if !matches!(measured, Ok(Some(_))) {
        let _ = call(&pool, "cancel", std::slice::from_ref(&run));
    }
    measured
}

/// [`measure`]'s tasks, queued under the run's number `run`, and their answers put together.
async fn gather(
    (pool, run): (&JsValue, &JsValue),
    config: &FlowConfig,
    masks: &FlowMasks,
    workers: usize,
    (key, share): (FlowKey, f64),
    cancel: &Cell<bool>,
    d: &Callback<Action>,
) -> Result<Option<FlowRaw>, String> {
    let request = flow_task::encode(config, masks);
    let n = masks.n();
    let count = (workers * RANGES_PER_WORKER).clamp(1, n);
    let ranges: Vec<(usize, usize)> = (0..count).map(|i| (i * n / count, (i + 1) * n / count)).collect();
    // Every task is queued at once (the pool hands them out as workers free up); answers are
    // awaited in order.
    let base = start((pool, run), "base", &request, 0, 0);
    let parts: Vec<_> = ranges.iter().map(|&(a, b)| start((pool, run), "copies", &request, a, b)).collect();
    let base = answer(base).await;
    if cancel.get() {
        return Ok(None);
    }
    let mut raw = flow_task::raw_from_base(config, masks, &base?).map_err(|e| e.to_string())?;
    for (i, (part, &(a, b))) in parts.into_iter().zip(&ranges).enumerate() {
        let columns = answer(part).await;
        if cancel.get() {
            return Ok(None);
        }
        raw.put_columns(a, b - a, &columns?).map_err(|e| e.to_string())?;
        d.emit(Action::Flow(FlowAction::Progress { key, progress: share * (i + 1) as f64 / count as f64 }));
    }
    Ok(Some(raw))
}
