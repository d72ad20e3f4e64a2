//! The Models view: a real model's attention (a gallery entry or a `config.json`) at a long
//! context, through the core's structured reach engine. The form picks the model, context and
//! documents (an encoder-decoder's encoder length); the legend shows the layer kinds; the report
//! shows the verdict, per-layer coverage and lookback, a zoomable heatmap of `R(l)` and the
//! limit's compressed Hasse diagram.
//!
//! Runs are effects keyed by what they compute ([`ModelKey`](crate::state::ModelKey)): [`run`]
//! steps the core's `ModelJob` (one layer per step) through the views' one runner (`ui/job.rs`:
//! debounce, time slices, progress, cancel); the effect's cleanup sets the cancel flag when the
//! key changes, and the reducer drops whatever a stale run still reports.

mod heatmap;
mod kinds;
mod picker;
mod report;

use std::cell::Cell;
use std::rc::Rc;

use hasseflow_core::model::{self, ModelJob, ModelRun};
use yew::prelude::*;

use super::form::on_click;
use super::palette::Theme;
use super::{io, job};
use crate::state::{Action, ModelOutcome, ModelRequest, ModelStatus, ModelsAction, ModelsState, ViewAction, run_error};
use heatmap::Heatmap;
use kinds::LayerKinds;
use picker::ModelPicker;
pub use picker::read_config;
use report::{HasseOfLimit, LayerPlot, LayerTable, Verdict};

/// Delay before a run starts within a burst, so a burst of zoom steps starts one run, not many.
const DEBOUNCE_MS: u32 = 150;

thread_local! {
    /// Runs started and not yet returned (a cancelled one returns at its next yield).
    static IN_FLIGHT: Cell<u32> = const { Cell::new(0) };
    /// When the latest run was asked for ([`io::now`]).
    static LAST_ASKED: Cell<f64> = const { Cell::new(f64::NEG_INFINITY) };
}

/// Counts a run in [`IN_FLIGHT`] while it lives.
struct InFlight;

impl InFlight {
    /// Counts a run asked for at `now`; whether it is part of a burst: another is still in flight
    /// and was asked for less than [`DEBOUNCE_MS`] before.
    fn start(now: f64) -> (InFlight, bool) {
        let others = IN_FLIGHT.with(|c| c.replace(c.get() + 1)) > 0;
        let last = LAST_ASKED.with(|c| c.replace(now));
        (InFlight, others && now - last < f64::from(DEBOUNCE_MS))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        IN_FLIGHT.with(|c| c.set(c.get().saturating_sub(1)));
    }
}

/// Runs `req` in slices and reports back through `d` (progress, then the result or the failure),
/// unless `cancel` is set first. A run asked for within a burst (zoom steps, or edits, each less
/// than [`DEBOUNCE_MS`] after the one before while it is still in flight) waits [`DEBOUNCE_MS`]
/// first; any other (a gallery pick on an idle view, or during a long run) starts at the next
/// turn of the event loop: the debounce alone was the whole 150 ms a switch may take (issue 31).
pub async fn run(req: ModelRequest, cancel: Rc<Cell<bool>>, d: Callback<Action>) {
    let (_in_flight, burst) = InFlight::start(io::now());
    if !job::debounce(if burst { DEBOUNCE_MS } else { 0 }, &cancel).await {
        return;
    }
    let key = req.key;
    let fail = |error: String| d.emit(Action::Models(ModelsAction::Failed { key, error }));
    let start = io::now();
    // The CLI's path: refused up front, with the estimate, above the browser's memory limit.
    let stack = match ModelRun::stack(&req.spec, req.n, &req.overlays, req.queries.len(), model::MAX_RUN_BYTES) {
        Ok(s) => s,
        Err(e) => return fail(run_error(&req.spec, req.n, &e)),
    };
    let made = ModelJob::new(&stack, req.source, (*req.spec).clone(), req.n, req.overlays, &req.queries);
    let mut run = match made {
        Ok(j) => j,
        Err(e) => return fail(e.to_string()),
    };
    d.emit(Action::Models(ModelsAction::Progress { key, done: 0, total: run.depth() }));
    let progress = |done, total| d.emit(Action::Models(ModelsAction::Progress { key, done, total }));
    match job::sliced(&mut run, &cancel, progress).await {
        None => {}
        Some(Err(e)) => fail(e.to_string()),
        Some(Ok(run)) => {
            d.emit(Action::Models(ModelsAction::Finished { key, run: Rc::new(run), millis: io::now() - start }))
        }
    }
}

/// Models view properties.
#[derive(Properties, Clone)]
pub struct ModelsProps {
    /// The view's state.
    pub models: Rc<ModelsState>,
    /// Light or dark.
    pub theme: Theme,
    /// The view's actions.
    pub on_models: Callback<ModelsAction>,
    /// Messages.
    pub on_view: Callback<ViewAction>,
}

impl PartialEq for ModelsProps {
    fn eq(&self, o: &Self) -> bool {
        let (a, b) = (&self.models, &o.models);
        let same_outcome = match (&a.outcome, &b.outcome) {
            (Some(x), Some(y)) => Rc::ptr_eq(x, y),
            (None, None) => true,
            _ => false,
        };
        same_outcome
            && a.choice == b.choice
            && (a.n, a.encoder_n, &a.docs, a.settings, a.view, a.layer)
                == (b.n, b.encoder_n, &b.docs, b.settings, b.view, b.layer)
            && a.run == b.run
            && a.reading == b.reading
            && self.theme == o.theme
    }
}

/// The Models view.
#[function_component(ModelsView)]
pub fn models_view(p: &ModelsProps) -> Html {
    let m = &p.models;
    // The scaled copy the editor would get: once per model, context and documents.
    let scaled = {
        let models = p.models.clone();
        use_memo(m.settings, move |_| models.scaled(crate::state::MAX_EDIT_N as u64).map_err(|e| e.to_string()))
    };
    // The layer kinds, for the legend, the plot's strip and the table: once per settings.
    let legend = {
        let models = p.models.clone();
        use_memo(m.settings, move |_| models.legend())
    };
    let current: Option<Rc<ModelOutcome>> = m.current().cloned();
    let status = m.status_now();
    let running = !m.up_to_date() && !matches!(status, ModelStatus::Failed(_));
    let reading = m.reading.as_ref().map(|r| r.what().to_string());
    let progress = match &status {
        // The config reader loads on first use (a module of its own): the read waits for it.
        _ if reading.is_some() => html! {
            <p class="models-status" id="models-reading" role="status"><progress aria-label="reading the model" />
                { format!(" reading {}: loading the model reader…", reading.as_deref().unwrap_or_default()) }</p>
        },
        ModelStatus::Failed(e) => {
            let retry = on_click(&p.on_models, ModelsAction::Retry);
            html! { <p class="models-status flow-error" id="models-error" role="alert">{ format!("The run failed: {e}") }
            {" "}<button type="button" id="models-retry" onclick={retry}>{"Retry"}</button></p> }
        }
        ModelStatus::Running { done, total } if running => html! {
            <p class="models-status" id="models-progress" role="status" data-done={done.to_string()} data-total={total.to_string()}>
                <progress max={total.max(&1).to_string()} value={done.to_string()} aria-label="layers computed" />
                { format!(" layer {done} / {total}") }
            </p>
        },
        _ if running => {
            html! { <p class="models-status" id="models-progress" role="status"><progress aria-label="starting" />{" starting…"}</p> }
        }
        _ => html! {},
    };
    let state = if reading.is_some() {
        "reading"
    } else if running {
        "running"
    } else if matches!(status, ModelStatus::Failed(_)) {
        "failed"
    } else {
        "done"
    };
    html! {
        <div class="models columns-models" id="models-view" data-state={state} data-settings={m.settings.to_string()}
            data-dropped={m.run.dropped.to_string()}>
            <aside class="left" aria-label="Model and context">
                <ModelPicker choice={m.choice.clone()} reading={reading.clone()} n={m.n} encoder_n={m.encoder_n} docs={m.docs.clone()} images={m.images.clone()}
                    scaled={(*scaled).clone()} outcome={current.clone()} on_models={p.on_models.clone()} on_view={p.on_view.clone()} />
                if !m.choice.is_none() {
                    <LayerKinds legend={legend.clone()} layer={m.layer} />
                }
            </aside>
            <section class="center" aria-label="Reach of the model">
                { progress }
                if let Some(o) = &current {
                    <Verdict outcome={o.clone()} />
                    <Heatmap outcome={o.clone()} view={m.view} layer={m.layer} theme={p.theme} pending={!m.up_to_date()}
                        on_models={p.on_models.clone()} />
                } else if m.choice.is_none() && reading.is_none() {
                    <p class="hint" id="models-none">{"No model yet: choose one from the gallery, or load a config.json."}</p>
                } else if !running {
                    <p class="hint">{"No run yet."}</p>
                }
            </section>
            <aside class="right" aria-label="Per layer and the limit">
                if let Some(o) = &current {
                    <LayerPlot outcome={o.clone()} layer={m.layer} legend={legend.clone()} on_models={p.on_models.clone()} />
                    <HasseOfLimit outcome={o.clone()} />
                }
            </aside>
            // Under the report, as wide as the report and the right column together: a 1M-token
            // model's lookbacks and cell counts do not fit the right column (issue 31).
            if let Some(o) = &current {
                <LayerTable outcome={o.clone()} layer={m.layer} legend={legend.clone()} on_models={p.on_models.clone()} />
            }
        </div>
    }
}
