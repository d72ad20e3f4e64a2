//! The web app's third wasm module, loaded by each Web Worker of the Flow view (static/flow-worker.js,
//! started by static/boot.js's `hasseflowFlow` pool): the flow model's CPU path behind two entry
//! points over one `core::flow_task` request, and its GPU path (hasseflow-gpu, WebGPU) behind two
//! more, so that neither the device code nor wgpu is in the page's first download. A worker keeps
//! the run of its last request (the model, the masks and the unperturbed pass), so the ranges of
//! copies it is asked for next pay for the unperturbed pass once; the pool's GPU worker keeps its
//! device, opened on the first GPU task.

use std::cell::RefCell;
use std::rc::Rc;

use hasseflow_core::flow::cpu::CpuFlowJob;
use hasseflow_core::flow::{FlowMasks, FlowModel};
use hasseflow_core::flow_task;
use hasseflow_gpu::{GpuError, GpuFlow};
use wasm_bindgen::prelude::*;

/// The last request's run, after its unperturbed pass.
struct Loaded {
    request: String,
    model: FlowModel,
    masks: FlowMasks,
    job: CpuFlowJob,
}

thread_local! {
    static LAST: RefCell<Option<Loaded>> = const { RefCell::new(None) };
    /// The GPU worker's device and kernels, once opened.
    static GPU: RefCell<Option<Rc<GpuFlow>>> = const { RefCell::new(None) };
}

/// The device, opened on the first call and kept (a failure is not kept: the next task tries
/// again, as the view's Retry expects).
async fn device() -> Result<Rc<GpuFlow>, String> {
    if let Some(gpu) = GPU.with_borrow(Clone::clone) {
        return Ok(gpu);
    }
    #[cfg(target_arch = "wasm32")]
    {
        let navigator = js_sys::Reflect::get(&js_sys::global(), &"navigator".into()).unwrap_or(JsValue::UNDEFINED);
        let gpu = js_sys::Reflect::get(&navigator, &"gpu".into()).unwrap_or(JsValue::UNDEFINED);
        if gpu.is_undefined() || gpu.is_null() {
            return Err("this browser has no WebGPU (navigator.gpu is missing)".to_string());
        }
    }
    let gpu = Rc::new(GpuFlow::new().await.map_err(|e| match e {
        GpuError::NoAdapter(_) => "the browser offers no WebGPU adapter".to_string(),
        e => e.to_string(),
    })?);
    GPU.with_borrow_mut(|slot| *slot = Some(gpu.clone()));
    Ok(gpu)
}

/// The adapter the GPU path would run on, or why there is none, as `core::flow_task::GpuAdapter`
/// JSON (what the page's plan weighs: the adapter's name, and whether it is a software one such as
/// SwiftShader). Opens the device on the first call.
pub async fn adapter_of() -> String {
    let answer = match device().await {
        Ok(gpu) => flow_task::GpuAdapter::Ready(gpu.backend_info()),
        Err(why) => flow_task::GpuAdapter::Unavailable(why),
    };
    // Cannot fail (a string or plain fields); an empty answer would read as no answer.
    serde_json::to_string(&answer).unwrap_or_default()
}

/// The request's whole run on the GPU: `core::flow_task::whole_answer`.
///
/// # Errors
/// The request's refusal, no device, or the run's failure, in one line.
pub async fn gpu_run_of(request: &str) -> Result<Vec<f32>, String> {
    let (model, masks) = flow_task::decode(request).map_err(|e| e.to_string())?;
    let gpu = device().await?;
    let raw = gpu.run(&model, &masks).await.map_err(|e| e.to_string())?;
    Ok(flow_task::whole_answer(&raw))
}

/// Runs `f` on the request's run after its unperturbed pass: the last request's, kept, or this
/// one's, read and passed once (the base task and the ranges of copies share it).
fn with_run<T>(request: &str, f: impl FnOnce(&mut Loaded) -> Result<T, String>) -> Result<T, String> {
    LAST.with_borrow_mut(|last| {
        if last.as_ref().is_none_or(|l| l.request != request) {
            *last = None;
            let (model, masks) = flow_task::decode(request).map_err(|e| e.to_string())?;
            let mut job = CpuFlowJob::new(&model, &masks);
            job.step(&model, &masks, 0);
            *last = Some(Loaded { request: request.to_string(), model, masks, job });
        }
        last.as_mut().map_or_else(|| Err("no run".to_string()), f)
    })
}

/// The unperturbed pass of the request's run: `core::flow_task::base_answer`.
///
/// # Errors
/// The request's refusal, in one line.
pub fn base_of(request: &str) -> Result<Vec<f32>, String> {
    with_run(request, |l| {
        let (attention, output) = l.job.unperturbed().ok_or("the unperturbed pass has not run")?;
        Ok(flow_task::base_answer(attention, output))
    })
}

/// The influence columns of copies `start..end` of the request's run (`CpuFlowJob::columns`).
///
/// # Errors
/// The request's refusal, or a range outside `0..n`, in one line.
pub fn copies_of(request: &str, start: usize, end: usize) -> Result<Vec<f32>, String> {
    with_run(request, |l| {
        if start > end || end > l.masks.n() {
            return Err(format!("copies {start}..{end} are not within 0..{}", l.masks.n()));
        }
        Ok(l.job.columns(&l.model, &l.masks, start..end))
    })
}

/// [`base_of`], for JS (a `Float32Array`, or a thrown `Error`).
#[wasm_bindgen]
pub fn base(request: &str) -> Result<Vec<f32>, JsError> {
    base_of(request).map_err(|e| JsError::new(&e))
}

/// [`copies_of`], for JS (a `Float32Array`, or a thrown `Error`).
#[wasm_bindgen]
pub fn copies(request: &str, start: usize, end: usize) -> Result<Vec<f32>, JsError> {
    copies_of(request, start, end).map_err(|e| JsError::new(&e))
}

/// [`adapter_of`], for JS (a promise of the JSON).
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen]
pub async fn adapter() -> String {
    adapter_of().await
}

/// [`gpu_run_of`], for JS (a promise of a `Float32Array`, or a thrown `Error`).
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen]
pub async fn gpu(request: String) -> Result<Vec<f32>, JsError> {
    gpu_run_of(&request).await.map_err(|e| JsError::new(&e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hasseflow_core::BitMatrix;
    use hasseflow_core::flow::FlowConfig;
    use hasseflow_core::flow::cpu::run_flow;

    /// The module's answers put together are the one-thread run, whichever requests came before
    /// (the cached run is replaced when the request changes).
    #[test]
    fn answers_put_together_are_the_one_thread_run() {
        for (n, seed) in [(9, 1), (13, 2), (9, 1)] {
            let config = FlowConfig { d_model: 16, heads: 2, layers: 3, seed };
            let model = FlowModel::new(config, n).expect("valid");
            let masks = FlowMasks::uniform(&BitMatrix::from_fn(n, |q, k| k <= q && q - k < 3), &config);
            let request = flow_task::encode(&config, &masks);
            let mut raw = flow_task::raw_from_base(&config, &masks, &base_of(&request).expect("base")).expect("fits");
            for (a, b) in [(5, n), (0, 2), (2, 5)] {
                raw.put_columns(a, b - a, &copies_of(&request, a, b).expect("copies")).expect("fits");
            }
            assert_eq!(raw, run_flow(&model, &masks));
        }
        assert!(copies_of("{", 0, 1).expect_err("refused").contains("not a flow request"));
        let config = FlowConfig { d_model: 16, heads: 1, layers: 1, seed: 0 };
        let request = flow_task::encode(&config, &FlowMasks::uniform(&BitMatrix::ones(4), &config));
        let e = copies_of(&request, 3, 5).expect_err("refused");
        assert!(e.contains("not within 0..4"), "{e}");
        assert!(copies_of(&request, 3, 2).is_err());
    }

    /// The GPU entry points (natively on Vulkan, lavapipe in CI, as the GPU crate's own tests):
    /// the adapter's JSON is the run's backend, the answer reads back as the device's own run, and
    /// a damaged request is refused in one line before the device is asked.
    #[test]
    fn the_gpu_answer_reads_back_as_the_device_run() {
        let config = FlowConfig { d_model: 16, heads: 2, layers: 2, seed: 3 };
        let n = 12;
        let model = FlowModel::new(config, n).expect("valid");
        let masks = FlowMasks::uniform(&BitMatrix::from_fn(n, |q, k| k <= q && q - k < 4), &config);
        let request = flow_task::encode(&config, &masks);
        let answer = pollster::block_on(adapter_of());
        let Ok(flow_task::GpuAdapter::Ready(backend)) = serde_json::from_str(&answer) else {
            panic!("an adapter (lavapipe): {answer}")
        };
        let answer = pollster::block_on(gpu_run_of(&request)).expect("runs");
        let raw = flow_task::raw_from_whole(&config, &masks, &answer, backend).expect("fits");
        let direct = pollster::block_on(GpuFlow::new()).expect("device");
        assert_eq!(raw, pollster::block_on(direct.run(&model, &masks)).expect("runs"));
        let e = pollster::block_on(gpu_run_of("{")).expect_err("refused");
        assert!(e.contains("not a flow request") && !e.contains('\n'), "{e}");
        // The kept device is dropped here, not in the thread's exit (where wgpu's own
        // thread-locals may be gone already).
        assert!(GPU.with_borrow_mut(Option::take).is_some(), "the device was kept");
    }
}
