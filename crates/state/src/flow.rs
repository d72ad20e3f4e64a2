//! The Flow view's part of the store: the model settings, which run the current mask needs
//! ([`FlowKey`]), and the outcome of the latest run. The runs themselves happen in the shell
//! (`ui::flow`), asynchronously; they report back through actions carrying the key they were
//! started for, and the reducer drops every report whose key is no longer the current one (the
//! mask or the settings changed meanwhile). Plain Rust, tested natively with the rest of the store.

use std::rc::Rc;

use super::KeyedRun;

use hasseflow_core::flow::{
    self, FlowConfig, FlowError, FlowMasks, FlowRaw, FlowReport, FlowSummary, INFLUENCE_THRESHOLD, rollout,
};
use hasseflow_core::{BitMatrix, LayerStack, StackMode};

/// Largest mask the Flow view runs (the model's limit).
pub const MAX_FLOW_N: usize = flow::MAX_N;

/// Which view sits beside the grid, under the shared layer control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SideView {
    /// The order of the limit (Hasse diagram or full order).
    Order,
    /// Measured information flow of a random Transformer.
    Flow,
}

/// Where the forward passes run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendChoice {
    /// WebGPU on a hardware adapter, else the CPU path (and the view says why): a software
    /// adapter such as SwiftShader is slower than the CPU path.
    Auto,
    /// WebGPU only: no adapter is an error, not a silent fallback.
    WebGpu,
    /// The core's CPU path, compiled to wasm.
    Cpu,
}

impl BackendChoice {
    /// All choices, with their names in the UI.
    pub const ALL: [(BackendChoice, &'static str, &'static str); 3] = [
        (BackendChoice::Auto, "auto", "Auto (GPU if hardware, else CPU)"),
        (BackendChoice::WebGpu, "webgpu", "WebGPU"),
        (BackendChoice::Cpu, "cpu", "CPU (wasm)"),
    ];

    /// The choice named `name` (`auto`, `webgpu`, `cpu`).
    pub fn from_name(name: &str) -> Option<BackendChoice> {
        BackendChoice::ALL.iter().find(|(_, n, _)| *n == name).map(|(c, _, _)| *c)
    }

    /// Its name (`auto`, `webgpu`, `cpu`).
    pub fn name(self) -> &'static str {
        BackendChoice::ALL.iter().find(|(c, _, _)| *c == self).map_or("auto", |(_, n, _)| n)
    }
}

/// What a flow run does once it knows which WebGPU adapter (if any) it has: the backend policy,
/// decided here (plain Rust, tested natively) and carried out by `ui::flow::run`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BackendPlan {
    /// Run on the CPU path; `note` says why when the user did not choose the CPU.
    Cpu {
        /// Why the CPU stands in (shown beside the backend badge).
        note: Option<String>,
    },
    /// Run on WebGPU; if that run fails, fall back to the CPU (`Auto`) or fail (`WebGpu`).
    Gpu {
        /// Whether a failed GPU run falls back to the CPU.
        fallback: bool,
    },
    /// Fail with this message (WebGPU insisted on, none available).
    Fail(String),
}

/// The adapter a run found: its name and whether it is a software one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterSeen {
    /// The adapter's name (may be empty).
    pub name: String,
    /// A software (fallback) adapter such as SwiftShader.
    pub software: bool,
}

/// The backend policy. Auto takes WebGPU only on a hardware adapter: a software adapter
/// (SwiftShader) measured 14-28x slower than the wasm CPU path in the same browser
/// (docs/BENCHMARKS.md), so auto takes the faster one and says so; WebGPU insists; CPU never
/// opens a device (`adapter` is then ignored).
pub fn plan_backend(choice: BackendChoice, adapter: Result<&AdapterSeen, &str>) -> BackendPlan {
    match (choice, adapter) {
        (BackendChoice::Cpu, _) => BackendPlan::Cpu { note: None },
        (BackendChoice::WebGpu, Err(e)) => BackendPlan::Fail(format!("WebGPU is not available: {e}")),
        (BackendChoice::WebGpu, Ok(_)) => BackendPlan::Gpu { fallback: false },
        (BackendChoice::Auto, Ok(a)) if a.software => {
            let name = Some(a.name.trim()).filter(|n| !n.is_empty()).unwrap_or("a fallback adapter");
            BackendPlan::Cpu {
                note: Some(format!(
                    "CPU chosen: the only WebGPU adapter is software ({name}), slower than this CPU path; choose WebGPU to use it anyway"
                )),
            }
        }
        (BackendChoice::Auto, Ok(_)) => BackendPlan::Gpu { fallback: true },
        (BackendChoice::Auto, Err(e)) => BackendPlan::Cpu { note: Some(format!("CPU fallback: {e}")) },
    }
}

/// The relative influence thresholds the view offers (the first is the core's default).
pub const THRESHOLDS: [f64; 4] = [INFLUENCE_THRESHOLD, 1e-6, 1e-4, 1e-2];

/// What the user chose for the flow model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowSettings {
    /// Model shape and seed.
    pub config: FlowConfig,
    /// Where to run.
    pub backend: BackendChoice,
    /// Relative influence threshold of the support (changing it needs no new run).
    pub threshold: f64,
    /// Run the document's layer stack, when it has one, instead of its mask in every layer.
    pub use_stack: bool,
}

impl Default for FlowSettings {
    fn default() -> Self {
        FlowSettings {
            config: FlowConfig::default(),
            backend: BackendChoice::Auto,
            threshold: INFLUENCE_THRESHOLD,
            use_stack: true,
        }
    }
}

/// What one run computes: the mask (by revision) and the settings that change the numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowKey {
    /// Revision of the document the run reads.
    pub revision: u64,
    /// Model shape and seed.
    pub config: FlowConfig,
    /// Backend asked for.
    pub backend: BackendChoice,
    /// Whether the run uses the document's layer stack (else its mask in every layer).
    pub stack: bool,
}

/// What the model's attention reads.
#[derive(Clone, Debug, PartialEq)]
pub enum FlowSource {
    /// The editor's mask, in every head of every layer.
    Mask(Rc<BitMatrix>),
    /// The file's layer stack: model layer `l` uses stack layer `(l - 1) mod K` (periodically,
    /// as `hasseflow flow` does), head `h` its mask `h mod m`.
    Stack(Rc<(LayerStack, StackMode)>),
}

impl FlowSource {
    /// The masks of every head of every layer of a model with `config`.
    ///
    /// # Errors
    /// A stack layer with more head masks than the model has heads.
    pub fn masks(&self, config: &FlowConfig) -> Result<FlowMasks, FlowError> {
        match self {
            FlowSource::Mask(m) => Ok(FlowMasks::uniform(m, config)),
            FlowSource::Stack(s) => FlowMasks::from_stack(&s.0, config),
        }
    }

    /// Positions.
    pub fn n(&self) -> usize {
        match self {
            FlowSource::Mask(m) => m.n(),
            FlowSource::Stack(s) => s.0.n(),
        }
    }
}

/// A run to start: its key and what it reads.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRequest {
    /// What the run computes.
    pub key: FlowKey,
    /// The document's mask or stack at `key.revision`.
    pub source: FlowSource,
}

/// What a finished run sends back to the store.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRun {
    /// The measurements (with the backend that produced them).
    pub raw: Rc<FlowRaw>,
    /// The comparison with `R(L)` at the threshold current when the run started.
    pub report: FlowReport,
    /// Wall-clock milliseconds of the computation (forward passes, readback and report).
    pub millis: f64,
    /// Why the run is not on the backend asked for (e.g. no WebGPU adapter), if it is not.
    pub fallback: Option<String>,
    /// The Web Workers that measured a CPU run (0: the page's own thread, or the GPU).
    pub workers: usize,
}

/// The latest run that matches the current mask and settings, ready to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowOutcome {
    /// What it computed.
    pub key: FlowKey,
    /// The run.
    pub run: FlowRun,
    /// The masks the model used (for re-thresholding).
    pub masks: Rc<FlowMasks>,
    /// The theory's `R(L)`, `L = 1..=layers` (index `L - 1`).
    pub reach: Rc<Vec<BitMatrix>>,
}

/// Progress of the run for the current key.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum FlowStatus {
    /// Nothing started (or the view is hidden).
    #[default]
    Idle,
    /// Running; fraction done.
    Running(f64),
    /// The run failed; the message says why.
    Failed(String),
}

/// The Flow view's state.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowState {
    /// The user's settings.
    pub settings: FlowSettings,
    /// The run for the current key, if finished.
    pub outcome: Option<Rc<FlowOutcome>>,
    /// The status of the run for the current key; reports dropped because the mask or the
    /// settings had changed (shown, and tested).
    pub run: KeyedRun<FlowKey, FlowStatus>,
    /// Influence or rollout on the left map.
    pub map: FlowMap,
}

impl Default for FlowState {
    fn default() -> Self {
        FlowState {
            settings: FlowSettings::default(),
            outcome: None,
            run: KeyedRun::default(),
            map: FlowMap::Influence,
        }
    }
}

impl FlowState {
    /// The key of the run the current mask needs, when one can run (`has_stack`: the document
    /// has a layer stack).
    pub fn key(&self, revision: u64, n: usize, has_stack: bool) -> Option<FlowKey> {
        ((1..=MAX_FLOW_N).contains(&n) && self.settings.config.validate().is_ok()).then_some(FlowKey {
            revision,
            config: self.settings.config,
            backend: self.settings.backend,
            stack: has_stack && self.settings.use_stack,
        })
    }

    /// The outcome, when it matches `key` (older outcomes are never shown as current).
    pub fn current(&self, key: Option<FlowKey>) -> Option<&Rc<FlowOutcome>> {
        self.outcome.as_ref().filter(|o| Some(o.key) == key)
    }

    /// The status of the run for `key` (`Idle` for any other key).
    pub fn status_for(&self, key: Option<FlowKey>) -> FlowStatus {
        self.run.status_for(key)
    }

    /// Stores a finished run for `key` when `key` is `current` (`source`: what the current
    /// document gives the model); otherwise counts it as dropped.
    pub(super) fn finish(&mut self, key: FlowKey, current: Option<FlowKey>, source: &FlowSource, run: FlowRun) {
        let masks = match source.masks(&key.config) {
            Ok(m) if Some(key) == current && run.raw.n == m.n() && run.raw.influence.len() == m.layers() => m,
            _ => {
                self.run.dropped += 1;
                return;
            }
        };
        let reach = masks.reach();
        let mut run = run;
        if run.report.threshold != self.settings.threshold {
            run.report = run.report.rethreshold(&run.raw, &masks, self.settings.threshold);
        }
        self.outcome = Some(Rc::new(FlowOutcome { key, run, masks: Rc::new(masks), reach: Rc::new(reach) }));
        self.run.report(key, current, FlowStatus::Idle);
    }

    /// Records progress or failure for `key` when it is `current`; otherwise counts it as dropped.
    pub(super) fn report_status(&mut self, key: FlowKey, current: Option<FlowKey>, status: FlowStatus) {
        self.run.report(key, current, status);
    }

    /// Changes the threshold: the shown outcome is re-thresholded in place (no new run).
    pub(super) fn set_threshold(&mut self, threshold: f64) {
        self.settings.threshold = threshold;
        if let Some(o) = &mut self.outcome
            && o.run.report.threshold != threshold
        {
            let o = Rc::make_mut(o);
            o.run.report = o.run.report.rethreshold(&o.run.raw, &o.masks, threshold);
        }
    }
}

/// An influence threshold outside `(0, 1)`.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("the influence threshold must lie strictly between 0 and 1, got {0}")]
pub struct ThresholdError(pub f64);

/// Why `threshold` is not usable, if it is not (it must lie strictly between 0 and 1).
///
/// # Errors
/// [`ThresholdError`] when it is not finite or not strictly between 0 and 1.
pub fn check_threshold(threshold: f64) -> Result<(), ThresholdError> {
    if threshold.is_finite() && threshold > 0.0 && threshold < 1.0 { Ok(()) } else { Err(ThresholdError(threshold)) }
}

/// The relative influence of every cell of one layer (`influence / max over the layer`, 0 when
/// the layer shows no influence at all), for drawing.
fn relative(influence: &[f32]) -> Vec<f32> {
    let max = influence.iter().fold(0f32, |m, &x| m.max(x));
    if max > 0.0 { influence.iter().map(|&x| x / max).collect() } else { vec![0.0; influence.len()] }
}

/// What the Flow view's left map shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FlowMap {
    /// The measured influence of perturbing each input.
    #[default]
    Influence,
    /// Attention rollout (Abnar & Zuidema): the cheaper view from the attention weights alone.
    Rollout,
}

/// One layer of an outcome, ready to paint: the log-scaled influence, the support and the cells
/// where the measurement and the theory disagree.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerPicture {
    /// Positions.
    pub n: usize,
    /// Layer `L`, 1-based.
    pub layer: usize,
    /// The colour scale spans `10^lo_decade ..= 1` (relative influence; the decade of the
    /// smallest non-zero value, at least `-12`).
    pub lo_decade: i32,
    /// Per cell: `None` for exactly zero influence, else the position on the log scale in `[0, 1]`.
    pub shade: Vec<Option<f32>>,
    /// Relative influence per cell (`influence / layer maximum`).
    pub relative: Vec<f32>,
    /// Cells above the threshold.
    pub support: BitMatrix,
    /// The theory's `R(L)`.
    pub reach: BitMatrix,
    /// Cells where `support` and `reach` differ.
    pub disagree: BitMatrix,
}

impl FlowOutcome {
    /// Layer `layer` (1-based, at most the model's layers) as a picture.
    ///
    /// # Panics
    /// If `layer` is 0 or past the model's last layer.
    pub fn picture(&self, layer: usize, map: FlowMap) -> LayerPicture {
        match map {
            FlowMap::Influence => self.picture_of(layer, &self.run.raw.influence[layer - 1], self.run.report.threshold),
            FlowMap::Rollout => self.picture_of(layer, &self.rollouts()[layer - 1], 0.0),
        }
    }

    /// The report as JSON: the object `hasseflow flow --json` prints (backend, adapter, model,
    /// threshold, exact, per-layer agreement), plus `run_ms`, `fallback` and `stack` (whether the
    /// file's layer stack ran) instead of the CLI's timings.
    pub fn report_json(&self) -> String {
        let summary = FlowSummary::new(&self.run.raw, &self.run.report, self.key.config);
        let mut v = serde_json::to_value(summary).unwrap_or_default();
        v["run_ms"] = serde_json::json!(self.run.millis);
        v["fallback"] = serde_json::json!(self.run.fallback);
        v["workers"] = serde_json::json!(self.run.workers);
        v["stack"] = serde_json::json!(self.key.stack);
        v.to_string()
    }

    /// The attention rollout after every layer, as `f32` (`O(layers · ones(A) · n)`: callers
    /// that step through layers compute it once).
    pub fn rollouts(&self) -> Vec<Vec<f32>> {
        rollout(&self.run.raw.attention, self.run.raw.n)
            .into_iter()
            .map(|r| r.into_iter().map(|x| x as f32).collect())
            .collect()
    }

    /// Layer `layer` of `values` (influence or rollout, `n x n`) as a picture, counting a cell as
    /// supported above `threshold` of the layer's maximum (0 for rollout: rollout rows are
    /// probability distributions, so its support is every positive entry).
    ///
    /// # Panics
    /// If `layer` is 0 or past the model's last layer.
    pub fn picture_of(&self, layer: usize, values: &[f32], threshold: f64) -> LayerPicture {
        let n = self.run.raw.n;
        let rel = relative(values);
        let min_pos = rel.iter().copied().filter(|&x| x > 0.0).fold(1f32, f32::min);
        let lo_decade = (f64::from(min_pos).log10().floor() as i32).clamp(-12, -1);
        let span = -f64::from(lo_decade);
        let shade = rel
            .iter()
            .map(|&x| (x > 0.0).then(|| ((f64::from(x).log10() + span) / span).clamp(0.0, 1.0) as f32))
            .collect();
        let reach = self.reach[layer - 1].clone();
        let support = BitMatrix::from_fn(n, |q, k| f64::from(rel[q * n + k]) > threshold);
        let disagree = BitMatrix::from_fn(n, |q, k| support.get(q, k) != reach.get(q, k));
        LayerPicture { n, layer, lo_decade, shade, relative: rel, support, reach, disagree }
    }
}

/// The Flow view's settings and its runs' reports (reduced here; a report is dropped when its
/// `key` is no longer current).
#[derive(Clone, Debug, PartialEq)]
pub enum FlowAction {
    /// Change the flow model's settings (refused with a message when out of range).
    SetSettings(FlowSettings),
    /// A running flow computation's progress.
    Progress {
        /// What the run computes.
        key: FlowKey,
        /// Fraction done.
        progress: f64,
    },
    /// A flow computation finished.
    Finished {
        /// What the run computed.
        key: FlowKey,
        /// Its result.
        run: FlowRun,
    },
    /// A flow computation failed.
    Failed {
        /// What the run was computing.
        key: FlowKey,
        /// Why it failed, in words.
        error: String,
    },
    /// Try the failed flow run again.
    Retry,
    /// Show the measured influence or the attention rollout on the Flow view's map.
    SetMap(FlowMap),
}

impl super::AppState {
    /// The key of the flow run the current mask and settings need (`None` when the mask is too
    /// large for the model).
    pub fn flow_key(&self) -> Option<FlowKey> {
        self.flow.key(self.editor.revision, self.n(), self.editor.doc.stack.is_some())
    }

    /// What the flow model reads for `key`: the document's stack or its mask.
    fn flow_source(&self, key: &FlowKey) -> FlowSource {
        match (&self.editor.doc.stack, key.stack) {
            (Some(stack), true) => FlowSource::Stack(stack.clone()),
            _ => FlowSource::Mask(self.editor.doc.mask.clone()),
        }
    }

    /// The flow run the shell should start now: the Flow view is shown, no stroke is in progress,
    /// and the current key has neither an outcome nor a failure.
    pub fn flow_request(&self) -> Option<FlowRequest> {
        let key = self.flow_key()?;
        let wanted = self.view == super::View::Editor
            && self.side == SideView::Flow
            && self.editor.stroke.is_none()
            && self.flow.current(Some(key)).is_none()
            && !matches!(self.flow.status_for(Some(key)), FlowStatus::Failed(_));
        wanted.then(|| FlowRequest { key, source: self.flow_source(&key) })
    }

    /// The model layer the Flow view shows for the shared layer `L` (`None` at `L = 0`, the
    /// inputs; layers past the model's last show its last).
    pub fn flow_layer(&self) -> Option<usize> {
        (self.editor.layer >= 1).then(|| self.editor.layer.min(self.flow.settings.config.layers))
    }

    /// The Flow view's actions.
    pub(super) fn apply_flow(&mut self, action: FlowAction) {
        match action {
            FlowAction::SetSettings(settings) => {
                let refused = match (settings.config.validate(), check_threshold(settings.threshold)) {
                    (Err(e), _) => Some(e.to_string()),
                    (_, Err(e)) => Some(e.to_string()),
                    _ => None,
                };
                if let Some(e) = refused {
                    self.error(format!("flow model: {e}. The settings were not changed."));
                    return;
                }
                self.flow.settings.config = settings.config;
                self.flow.settings.backend = settings.backend;
                self.flow.settings.use_stack = settings.use_stack;
                self.flow.set_threshold(settings.threshold);
                self.editor.layer = self.editor.layer.min(self.max_layer());
            }
            FlowAction::Progress { key, progress } => {
                let current = self.flow_key();
                self.flow.report_status(key, current, FlowStatus::Running(progress.clamp(0.0, 1.0)));
            }
            FlowAction::Finished { key, run } => {
                let current = self.flow_key();
                let source = self.flow_source(&key);
                self.flow.finish(key, current, &source, run);
            }
            FlowAction::Failed { key, error } => {
                let current = self.flow_key();
                self.flow.report_status(key, current, FlowStatus::Failed(error));
            }
            FlowAction::SetMap(m) => self.flow.map = m,
            FlowAction::Retry => {
                self.flow.run.retry();
            }
        }
    }
}
