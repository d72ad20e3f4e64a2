//! The one runner of the views' jobs (`ui/flow.rs`, `ui/models.rs`): a debounce before the first
//! step, time slices of at most [`SLICE_MS`] between yields to the browser ([`yield_now`]: so
//! painting and input never wait on a run), progress after each slice, and an end as soon as the
//! effect's cancel flag is set (its key changed). Any core [`Job`] runs through it; the store
//! keys and keeps the results.

use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;

use hasseflow_core::job::{Job, Step};
use yew::prelude::*;

use super::io;

/// Longest stretch a job computes before yielding to the browser.
const SLICE_MS: f64 = 12.0;

/// One run per key: when `key` changes, `start` is given a fresh cancel flag and the run it
/// returns (if any) is spawned; the flag is set when the key changes again or the component goes,
/// and the run (through [`debounce`] and [`sliced`]) then stops at its next yield.
#[hook]
pub fn use_job<K, F, R>(key: Option<K>, start: F)
where
    K: PartialEq + 'static,
    F: FnOnce(Rc<Cell<bool>>) -> Option<R> + 'static,
    R: Future<Output = ()> + 'static,
{
    use_effect_with(key, move |_| {
        let cancel = Rc::new(Cell::new(false));
        if let Some(run) = start(cancel.clone()) {
            wasm_bindgen_futures::spawn_local(run);
        }
        move || cancel.set(true)
    });
}

/// Waits `ms` milliseconds (0: until the browser has handled pending events and painted).
pub async fn pause(ms: u32) {
    gloo_timers::future::TimeoutFuture::new(ms).await;
}

/// Lets the browser handle what is pending (input, timers, a frame if one is due) and resumes, by
/// `setTimeout(0)`. A `MessageChannel` message avoids the 4 ms clamp of nested timeouts, but its
/// tasks can starve the page's frames: Llama 4 Scout at 1M in the release bundle never painted its
/// report (e2e), so the clamped timeout stays until the yields are scheduled with frames.
pub async fn yield_now() {
    pause(0).await;
}

/// Waits `ms` milliseconds, so a burst of edits starts one run, not many; whether the run is still
/// wanted.
pub async fn debounce(ms: u32, cancel: &Cell<bool>) -> bool {
    pause(ms).await;
    !cancel.get()
}

/// Steps `job` in slices of at most [`SLICE_MS`], calling `progress(done, total)` after each slice
/// that did not finish it; `None` when `cancel` is set between slices.
pub async fn sliced<J: Job>(
    job: &mut J,
    cancel: &Cell<bool>,
    mut progress: impl FnMut(usize, usize),
) -> Option<J::Output> {
    loop {
        let start = io::now();
        match job.step_while(|| io::now() - start < SLICE_MS) {
            Step::Done(out) => return Some(out),
            Step::Progress { done, total } => progress(done, total),
        }
        yield_now().await;
        if cancel.get() {
            return None;
        }
    }
}
