//! The web app's third wasm module, loaded by each Web Worker of the Flow view's CPU path
//! (static/flow-worker.js, started by static/boot.js's `hasseflowFlow` pool): the flow model's
//! CPU path behind two entry points over one `core::flow_task` request. A worker keeps the run
//! of its last request (the model, the masks and the unperturbed pass), so the ranges of copies it
//! is asked for next pay for the unperturbed pass once.

use std::cell::RefCell;

use hasseflow_core::flow::cpu::CpuFlowJob;
use hasseflow_core::flow::{FlowMasks, FlowModel};
use hasseflow_core::flow_task;
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
            let request = flow_task::encode(&model, &masks);
            let mut raw = flow_task::raw_from_base(&model, &masks, &base_of(&request).expect("base")).expect("fits");
            for (a, b) in [(5, n), (0, 2), (2, 5)] {
                raw.put_columns(a, b - a, &copies_of(&request, a, b).expect("copies")).expect("fits");
            }
            assert_eq!(raw, run_flow(&model, &masks));
        }
        assert!(copies_of("{", 0, 1).expect_err("refused").contains("not a flow request"));
        let config = FlowConfig { d_model: 16, heads: 1, layers: 1, seed: 0 };
        let model = FlowModel::new(config, 4).expect("valid");
        let request = flow_task::encode(&model, &FlowMasks::uniform(&BitMatrix::ones(4), &config));
        let e = copies_of(&request, 3, 5).expect_err("refused");
        assert!(e.contains("not within 0..4"), "{e}");
        assert!(copies_of(&request, 3, 2).is_err());
    }
}
