//! The Models view's part of the store: which model runs at which context ([`ModelsState`]),
//! which run the view needs ([`ModelKey`], [`ModelRequest`]) and the finished run
//! ([`ModelOutcome`]) with what the view draws from it (the downsampled heatmap of `R(l)`).
//!
//! Runs happen in the shell (`ui::models`), in slices of the core's steppable reach job; they report
//! back with the key they were started for, and the reducer drops every report whose key is no
//! longer current (the model, the context, the documents or the visible range changed).
//! Plain Rust, tested natively with the rest of the store.

use std::rc::Rc;

use super::KeyedRun;

use hasseflow_core::model::{self, ModelRun, ScaleError, ScaledModel, wire};
use hasseflow_core::pattern::{ModelSpec, Overlays};
use hasseflow_core::reach::check_model_run;
pub use hasseflow_render::{HEAT_CELLS, HeatPicture, HeatView};

/// Largest context the browser runs (larger ones are refused with a message; the CLI runs longer
/// ones, within its memory limit). Runs are also refused when their memory estimate is above
/// the core's [`model::MAX_RUN_BYTES`] (1 GiB in the browser), as the CLI refuses them.
pub const MAX_MODEL_N: u64 = 1 << 20;
/// Context the view starts with.
pub const DEFAULT_MODEL_N: u64 = 32768;

/// The model the view runs and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelChoice {
    /// The gallery name, or `None` for a config file.
    pub gallery: Option<&'static str>,
    /// The gallery's source URL or the file's name.
    pub source: String,
    /// The model.
    pub spec: Rc<ModelSpec>,
}

impl ModelChoice {
    /// The choice a read gives: a gallery entry's name and source, or the config's name.
    fn of(request: &wire::Request, spec: ModelSpec) -> ModelChoice {
        match request {
            wire::Request::Gallery(name) => {
                let entry = model::gallery_entry(name).ok();
                ModelChoice {
                    gallery: entry.map(|e| e.name),
                    source: entry.map_or_else(String::new, |e| e.source.into()),
                    spec: Rc::new(spec),
                }
            }
            wire::Request::Config { name, .. } => {
                ModelChoice { gallery: None, source: name.clone(), spec: Rc::new(spec) }
            }
        }
    }

    /// Whether this is the stand-in before the first read ([`ModelsState::reading`]), or after
    /// the first read failed: nothing to run.
    pub fn is_none(&self) -> bool {
        self.gallery.is_none() && self.source.is_empty() && self.spec.layers.is_empty()
    }

    /// The stand-in before the first read: no layers, nothing to run.
    fn none() -> ModelChoice {
        ModelChoice {
            gallery: None,
            source: String::new(),
            spec: Rc::new(ModelSpec {
                name: String::new(),
                model_type: String::new(),
                causal: true,
                layers: Vec::new(),
                max_position_embeddings: None,
                encoder: None,
                notes: Vec::new(),
                packing: Default::default(),
            }),
        }
    }
}

impl PendingModel {
    /// What is read, for the view: the gallery name or the config's name.
    pub fn what(&self) -> &str {
        match &*self.request {
            wire::Request::Gallery(name) | wire::Request::Config { name, .. } => name,
        }
    }
}

/// A model read waiting for the config reader, which the web app loads when the Models view
/// first needs it (`model::wire`); answered with [`ModelsAction::Answered`].
#[derive(Clone, Debug, PartialEq)]
pub struct PendingModel {
    /// Tells this read's answer from a stale one.
    pub id: u64,
    /// What the reader is asked.
    pub request: Rc<wire::Request>,
    /// What to apply once the model is read (a model link's context and layer).
    pub then: Vec<ModelsAction>,
}

/// What one run computes: the model, context and documents (by [`ModelsState::settings`]) and
/// the visible range whose rows it reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ModelKey {
    /// The settings' sequence number.
    pub settings: u64,
    /// The visible range.
    pub view: HeatView,
}

/// A run to start: its key and everything it reads.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelRequest {
    /// What the run computes.
    pub key: ModelKey,
    /// Source URL or file name (for the report).
    pub source: String,
    /// The model.
    pub spec: Rc<ModelSpec>,
    /// Context.
    pub n: u64,
    /// Documents.
    pub overlays: Overlays,
    /// The queries whose rows the heatmap needs.
    pub queries: Vec<u64>,
}

/// A finished run, as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelOutcome {
    /// What it computed.
    pub key: ModelKey,
    /// The core's run (spec, context, documents, report with the rows of the view's queries).
    pub run: Rc<ModelRun>,
    /// Milliseconds the run took in the browser.
    pub millis: f64,
}

impl ModelOutcome {
    /// Layer `layer` (1-based, clamped to the model's layers) of the outcome's view: each display
    /// cell is shaded by the fraction of its key range inside the row of its query.
    pub fn heatmap(&self, layer: usize) -> HeatPicture {
        let layers = &self.run.report.layers;
        let rows = layers.get(layer.clamp(1, layers.len().max(1)) - 1).map_or(&[][..], |l| &l.query_rows[..]);
        HeatPicture::from_rows(&self.key.view, rows.iter().map(|r| r.intervals.as_slice()))
    }

    /// The report as JSON: the object `hasseflow model --json` prints, with the browser's time
    /// as `timings_ms.reach` (the CLI's field).
    pub fn to_json(&self) -> String {
        let mut v = self.run.to_json();
        v["timings_ms"] = serde_json::json!({ "reach": self.millis });
        let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// Progress of the run for the current key.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ModelStatus {
    /// Nothing running.
    #[default]
    Idle,
    /// Running: layers done of all.
    Running {
        /// Layers computed.
        done: usize,
        /// Layers in the model.
        total: usize,
    },
    /// The run failed; why.
    Failed(String),
}

/// The Models view's state.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelsState {
    /// The model.
    pub choice: ModelChoice,
    /// Context length (an encoder-decoder's decoder length).
    pub n: u64,
    /// An encoder-decoder's encoder length as set (`None`: the context length); read only when
    /// the model has an encoder.
    pub encoder_n: Option<u64>,
    /// Document lengths (empty: one document); not applied to an encoder-decoder.
    pub docs: Vec<u64>,
    /// Image spans `[start, length]` whose tokens read each other both ways (Gemma 3's
    /// `token_type_ids`; empty: none); not applied to an encoder-decoder.
    pub images: Vec<[u64; 2]>,
    /// The model as it runs: `choice.spec` with the encoder's positions placed
    /// ([`ModelRun::positions`], the CLI's rule).
    pub placed: Rc<ModelSpec>,
    /// Positions of the run: `n`, or the encoder's and the decoder's together.
    pub total: u64,
    /// Bumped whenever the model, the context or the documents change.
    pub settings: u64,
    /// The visible range of the heatmap.
    pub view: HeatView,
    /// The layer the heatmap shows (1-based).
    pub layer: usize,
    /// The latest finished run (possibly of other settings: see [`ModelsState::current`]).
    pub outcome: Option<Rc<ModelOutcome>>,
    /// The status of the run for the current key; reports dropped because their key was no
    /// longer current.
    pub run: KeyedRun<ModelKey, ModelStatus>,
    /// Whether the config reader is linked in (`model::READER_LINKED`: the CLI's and the tests'
    /// core). Without it (the web app's first download) a read waits in [`ModelsState::reading`].
    pub reader_linked: bool,
    /// The read waiting for the lazily loaded reader (a newer one replaces it); the shell asks the
    /// reader while the Models view is shown ([`super::AppState::model_read`]).
    pub reading: Option<Rc<PendingModel>>,
}

impl Default for ModelsState {
    fn default() -> Self {
        ModelsState::starting(model::READER_LINKED)
    }
}

impl ModelsState {
    /// The start-up state: the first gallery model, read now with the reader linked in, else
    /// waiting for it ([`ModelsState::reading`]). Tests start with `reader_linked` false to play
    /// the web app's part.
    pub fn starting(reader_linked: bool) -> Self {
        let request = Rc::new(wire::Request::Gallery(model::GALLERY[0].name.to_string()));
        let mut reading = None;
        let read = if reader_linked { request.read_here() } else { None };
        let choice = match read {
            Some(Ok(spec)) => ModelChoice::of(&request, spec),
            Some(Err(_)) => ModelChoice::none(),
            None => {
                reading = Some(Rc::new(PendingModel { id: 0, request, then: Vec::new() }));
                ModelChoice::none()
            }
        };
        let (placed, total) = place(&choice.spec, DEFAULT_MODEL_N, None);
        ModelsState {
            choice,
            n: DEFAULT_MODEL_N,
            encoder_n: None,
            docs: Vec::new(),
            images: Vec::new(),
            placed,
            total,
            settings: 0,
            view: HeatView::whole(total),
            layer: 1,
            outcome: None,
            run: KeyedRun::default(),
            reader_linked,
            reading,
        }
    }
}

/// The config's name, when a read is of a config.
fn config_name(request: &wire::Request) -> Option<&str> {
    match request {
        wire::Request::Gallery(_) => None,
        wire::Request::Config { name, .. } => Some(name),
    }
}

/// A refused read in one line: a config's (named) keeps the current model, a gallery name's
/// changes nothing.
fn refusal(config: Option<&str>, why: &str) -> String {
    match config {
        Some(name) => format!("could not read {name}: {why}. The current model stays."),
        None => format!("{why}. Nothing was changed."),
    }
}

/// A run's refusal in words: the engine's message, and for an encoder-decoder which positions its
/// `n` counts (the engine's "context" is every position, the encoder's and the decoder's).
pub fn run_error(spec: &ModelSpec, n: u64, e: &dyn std::fmt::Display) -> String {
    match &spec.encoder {
        Some(enc) if enc.context < n => format!(
            "{e} (an encoder-decoder's positions: the encoder's {} and the decoder's {} together)",
            enc.context,
            n - enc.context
        ),
        _ => e.to_string(),
    }
}

/// `spec` at context `n` as it runs, by the CLI's rule ([`ModelRun::positions`]): an
/// encoder-decoder's encoder gets `encoder_n` positions (default `n`), placed first. The lengths
/// here are already checked (at least 1, at most [`MAX_MODEL_N`]), so the rule cannot refuse
/// them; were it to, the spec runs as it is at `n` and the run itself says why it fails.
fn place(spec: &Rc<ModelSpec>, n: u64, encoder_n: Option<u64>) -> (Rc<ModelSpec>, u64) {
    let encoder_n = encoder_n.filter(|_| spec.encoder.is_some());
    match ModelRun::positions((**spec).clone(), n, encoder_n) {
        Ok((s, total)) => (Rc::new(s), total),
        Err(_) => (spec.clone(), n),
    }
}

impl ModelsState {
    /// The key of the run the current settings and view need.
    pub fn key(&self) -> ModelKey {
        ModelKey { settings: self.settings, view: self.view }
    }

    /// The request for the current key.
    pub fn request(&self) -> ModelRequest {
        ModelRequest {
            key: self.key(),
            source: self.choice.source.clone(),
            spec: self.placed.clone(),
            n: self.total,
            overlays: self.overlays(),
            queries: self.view.queries(),
        }
    }

    /// The documents the run uses: none for an encoder-decoder (packed documents are not
    /// modelled there, as the CLI says).
    pub fn run_docs(&self) -> &[u64] {
        if self.placed.encoder.is_some() { &[] } else { &self.docs }
    }

    /// The image spans the run uses: none for an encoder-decoder (as the CLI says).
    pub fn run_images(&self) -> &[[u64; 2]] {
        if self.placed.encoder.is_some() { &[] } else { &self.images }
    }

    /// The overlays of the run: its documents and image spans.
    pub fn overlays(&self) -> Overlays {
        Overlays { docs: self.run_docs().to_vec(), images: self.run_images().to_vec(), ..Overlays::default() }
    }

    /// The layer kinds of the model, for the legend, the strip and the table.
    pub fn legend(&self) -> super::LayerLegend {
        super::LayerLegend::of(&self.placed)
    }

    /// The outcome when it is of the current settings (its view may be an older one while the
    /// rows of a new range are computed).
    pub fn current(&self) -> Option<&Rc<ModelOutcome>> {
        self.outcome.as_ref().filter(|o| o.key.settings == self.settings)
    }

    /// Whether the outcome for exactly the current key (settings and view) is there.
    pub fn up_to_date(&self) -> bool {
        self.outcome.as_ref().is_some_and(|o| o.key == self.key())
    }

    /// The status of the run for the current key.
    pub fn status_now(&self) -> ModelStatus {
        self.run.status_for(Some(self.key()))
    }

    /// The scaled copy the editor would get (at most `max_n` positions).
    ///
    /// # Errors
    /// The core's [`ScaleError`].
    pub fn scaled(&self, max_n: u64) -> Result<ScaledModel, ScaleError> {
        model::scale_model(&self.placed, self.total, self.run_docs(), max_n)
    }

    /// The settings changed: a new run is needed, the view shows everything again.
    pub(super) fn changed(&mut self) {
        (self.placed, self.total) = place(&self.choice.spec, self.n, self.encoder_n);
        self.settings += 1;
        self.view = HeatView::whole(self.total);
        self.layer = self.layer.clamp(1, self.placed.layer_count().max(1));
    }

    /// Stores a finished run for `key` when it is current; otherwise counts it as dropped.
    pub(super) fn finish(&mut self, key: ModelKey, run: Rc<ModelRun>, millis: f64) {
        if self.run.report(key, Some(self.key()), ModelStatus::Idle) {
            self.layer = self.layer.clamp(1, run.report.layers.len().max(1));
            self.outcome = Some(Rc::new(ModelOutcome { key, run, millis }));
        }
    }

    /// Records progress or failure for `key` when it is current; otherwise counts it as dropped.
    pub(super) fn report_status(&mut self, key: ModelKey, status: ModelStatus) {
        let current = Some(self.key());
        self.run.report(key, current, status);
    }
}

/// Why a typed context (or encoder) length is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    /// Zero.
    #[error("the context length must be at least 1")]
    Zero,
    /// More than [`MAX_MODEL_N`].
    #[error(
        "a context of {0} is more than the {MAX_MODEL_N} the browser runs (the CLI, hasseflow model --context {0}, runs longer contexts)"
    )]
    TooLong(u64),
    /// Not a whole number (the text as typed, trimmed).
    #[error("the context length {0:?} is not a whole number")]
    NotANumber(String),
}

/// `"1,048,576"`, `"1 048 576"` or `"1_048_576"` as a number.
fn parse_context(text: &str) -> Result<u64, ContextError> {
    let digits: String = text.chars().filter(|c| !matches!(c, ',' | '_' | ' ' | '\u{a0}' | '\u{202f}')).collect();
    match digits.parse::<u64>() {
        Ok(0) => Err(ContextError::Zero),
        Ok(n) if n > MAX_MODEL_N => Err(ContextError::TooLong(n)),
        Ok(n) => Ok(n),
        Err(_) => Err(ContextError::NotANumber(text.trim().to_string())),
    }
}

/// An encoder length as typed: empty for the default (the context length), else as a context.
fn parse_encoder(text: &str) -> Result<Option<u64>, String> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    parse_context(text).map(Some).map_err(|e| match e {
        ContextError::Zero => "the encoder length must be at least 1".to_string(),
        ContextError::TooLong(n) => format!(
            "an encoder length of {n} is more than the {MAX_MODEL_N} the browser runs (the CLI, hasseflow model \
             --encoder-context {n}, runs longer ones)"
        ),
        ContextError::NotANumber(t) => format!("the encoder length {t:?} is not a whole number"),
    })
}

/// The Models view's model, context, heatmap and runs' reports (reduced here; a report is
/// dropped when its `key` is no longer current).
#[derive(Clone, Debug, PartialEq)]
pub enum ModelsAction {
    /// Run a gallery model (by name).
    Select(String),
    /// Run a `config.json` (a file, a drop or pasted text); a refused config leaves the current
    /// model and its report as they were.
    LoadConfig {
        /// File name (or "pasted config"), for messages and the report's source.
        name: String,
        /// Contents.
        bytes: Vec<u8>,
    },
    /// Set the context length, the document lengths (comma list, empty: one document), an
    /// encoder-decoder's encoder length (empty: the context length) and the image spans
    /// (`START:LEN,...`, empty: none), as typed; refused together with a message when any is
    /// unusable.
    SetContext {
        /// The context length as typed (an encoder-decoder's decoder length).
        n: String,
        /// The document lengths as typed.
        docs: String,
        /// The encoder length as typed (read for an encoder-decoder only).
        encoder: String,
        /// The image spans as typed (`hasseflow model --images`).
        images: String,
    },
    /// Show layer `l` of the model (clamped to its layers).
    SetLayer(usize),
    /// Zoom the heatmap by `factor` (above 1: closer) about the point at fractions `(fq, fk)`
    /// of the visible query and key ranges.
    Zoom {
        /// Zoom factor.
        factor: f64,
        /// Fraction of the query range (0: first row, 1: last).
        fq: f64,
        /// Fraction of the key range.
        fk: f64,
    },
    /// Show every position in the heatmap again.
    ResetZoom,
    /// A model run's progress.
    Progress {
        /// What the run computes.
        key: ModelKey,
        /// Layers done.
        done: usize,
        /// Layers in all.
        total: usize,
    },
    /// A model run finished.
    Finished {
        /// What the run computed.
        key: ModelKey,
        /// The core's run.
        run: Rc<ModelRun>,
        /// Milliseconds it took.
        millis: f64,
    },
    /// A model run failed.
    Failed {
        /// What the run was computing.
        key: ModelKey,
        /// Why, in words.
        error: String,
    },
    /// The lazily loaded reader's answer to [`ModelsState::reading`] number `id`: the answer's
    /// JSON (`model::wire`), or why the reader did not load.
    Answered {
        /// The read it answers (a stale one is dropped).
        id: u64,
        /// The reader's answer, or why it could not be asked.
        answer: Result<String, String>,
    },
    /// Try the failed model run again.
    Retry,
    /// Open the model scaled down to the editor's size as a new document with its layer stack
    /// (one undo step).
    OpenScaled,
}

impl super::AppState {
    /// The model run the shell should start now: the Models view is shown and the current key
    /// has neither its outcome nor a failure.
    pub fn model_request(&self) -> Option<ModelRequest> {
        let m = &self.models;
        let wanted = self.view == super::View::Models
            && m.reading.is_none()
            && !m.choice.is_none()
            && !m.up_to_date()
            && !matches!(m.status_now(), ModelStatus::Failed(_));
        wanted.then(|| m.request())
    }

    /// The model read the shell should ask the lazily loaded reader now: one is waiting and the
    /// Models view is shown (a visitor who never opens it never loads the reader).
    pub fn model_read(&self) -> Option<Rc<PendingModel>> {
        self.models.reading.clone().filter(|_| self.view == super::View::Models)
    }

    /// Reads `request` (a gallery entry or a config) now with the reader linked in, or leaves it
    /// waiting for the lazily loaded one; `then` is applied once the model is read.
    pub(super) fn read_model(
        &mut self,
        request: Result<wire::Request, model::ModelError>,
        config: Option<&str>,
        then: Vec<ModelsAction>,
    ) {
        let request = match request {
            Ok(r) => Rc::new(r),
            Err(e) => return self.error(refusal(config, &e.to_string())),
        };
        let read = if self.models.reader_linked { request.read_here() } else { None };
        match read {
            Some(read) => {
                self.models.reading = None;
                self.model_read_done(&request, read.map_err(|e| e.to_string()), then);
            }
            None => {
                self.models.reading = Some(Rc::new(PendingModel { id: self.actions, request, then }));
            }
        }
    }

    /// A read's result: the model becomes the choice (with a message for a config), then `then`
    /// applies; a refusal leaves everything as it was, with the reader's line.
    fn model_read_done(&mut self, request: &wire::Request, read: Result<ModelSpec, String>, then: Vec<ModelsAction>) {
        let spec = match read {
            Err(e) => return self.error(refusal(config_name(request), &e)),
            Ok(spec) => spec,
        };
        if let wire::Request::Config { name, .. } = request {
            let pattern = super::clipped(&model::pattern_line(&spec), 160);
            self.info(format!("{name}: {} layers, {pattern}.", spec.layer_count()));
        }
        let choice = ModelChoice::of(request, spec);
        if choice != self.models.choice {
            self.models.choice = choice;
            self.models.changed();
        }
        for action in then {
            self.apply_model(action);
        }
    }

    /// The Models view's actions.
    pub(super) fn apply_model(&mut self, action: ModelsAction) {
        match action {
            ModelsAction::Select(name) => self.read_model(wire::Request::gallery(&name), None, Vec::new()),
            ModelsAction::LoadConfig { name, bytes } => {
                self.read_model(wire::Request::config(&name, &bytes), Some(&name), Vec::new());
            }
            ModelsAction::Answered { id, answer } => {
                let Some(read) = self.models.reading.take_if(|r| r.id == id) else { return };
                let result = answer
                    .map_err(|e| format!("the model reader did not load ({e})"))
                    .and_then(|a| wire::read_answer(&a));
                self.model_read_done(&read.request, result, read.then.clone());
            }
            ModelsAction::SetContext { n, docs, encoder, images } => {
                let spec = self.models.choice.spec.clone();
                let parsed = parse_context(&n).map_err(|e| e.to_string()).and_then(|n| {
                    let encoder_n = parse_encoder(&encoder)?;
                    // Packed documents and image spans are not modelled for an encoder-decoder:
                    // its form has no field for them, and those set for a decoder are cleared here.
                    let docs = if docs.trim().is_empty() || spec.encoder.is_some() {
                        Vec::new()
                    } else {
                        model::parse_doc_lengths(&docs, n).map_err(|e| e.to_string())?
                    };
                    let images = if images.trim().is_empty() || spec.encoder.is_some() {
                        Vec::new()
                    } else {
                        model::parse_image_spans(&images, n).map_err(|e| e.to_string())?
                    };
                    // The run's own check, up front, so that nothing changes when it would fail.
                    let (placed, total) = place(&spec, n, encoder_n);
                    let overlays = Overlays { docs: docs.clone(), images: images.clone(), ..Overlays::default() };
                    check_model_run(&placed, total, &overlays, HEAT_CELLS, model::MAX_RUN_BYTES)
                        .map_err(|e| run_error(&placed, total, &e))?;
                    Ok((n, docs, encoder_n, images))
                });
                match parsed {
                    Err(e) => self.error(format!("{e}. Nothing was changed.")),
                    Ok((n, docs, encoder_n, images)) => {
                        let m = &self.models;
                        if (n, &docs, encoder_n, &images) != (m.n, &m.docs, m.encoder_n, &m.images) {
                            self.models.n = n;
                            self.models.docs = docs;
                            self.models.encoder_n = encoder_n;
                            self.models.images = images;
                            self.models.changed();
                        }
                    }
                }
            }
            ModelsAction::SetLayer(l) => self.models.layer = l.clamp(1, self.models.placed.layer_count().max(1)),
            ModelsAction::Zoom { factor, fq, fk } => {
                if factor.is_finite() && factor > 0.0 {
                    self.models.view = self.models.view.zoomed(factor, fq, fk, self.models.total);
                }
            }
            ModelsAction::ResetZoom => self.models.view = HeatView::whole(self.models.total),
            ModelsAction::Progress { key, done, total } => {
                self.models.report_status(key, ModelStatus::Running { done, total });
            }
            ModelsAction::Finished { key, run, millis } => self.models.finish(key, run, millis),
            ModelsAction::Failed { key, error } => self.models.report_status(key, ModelStatus::Failed(error)),
            ModelsAction::Retry => {
                self.models.run.retry();
            }
            ModelsAction::OpenScaled => self.open_scaled(),
        }
    }

    /// Builds the model at the editor's size (windows and chunks scaled alike) as a dense layer
    /// stack and opens it as a new document: the mask is the union of the layers (its closure is
    /// the model's limit), the stack runs in the Flow view.
    fn open_scaled(&mut self) {
        use hasseflow_core::{BitMatrix, ReachStack, StackMode};
        let max = super::MAX_EDIT_N as u64;
        let built = self.models.scaled(max).map_err(|e| e.to_string()).and_then(|s| {
            let images = model::scale_image_spans(self.models.run_images(), s.factor, s.n);
            let overlays = Overlays { docs: s.docs.clone(), images, ..Overlays::default() };
            let stack = ReachStack::from_model(&s.spec, s.n, &overlays)
                .and_then(|st| st.to_layer_stack())
                .map_err(|e| e.to_string())?;
            Ok((s, stack))
        });
        let (scaled, stack) = match built {
            Err(e) => {
                return self
                    .error(format!("could not scale {}: {e}. Nothing was changed.", self.models.choice.spec.name));
            }
            Ok(b) => b,
        };
        let n = stack.n();
        let union = stack.layers().iter().fold(BitMatrix::zeros(n), |acc, l| acc.or(&l.adjacency()));
        let layers = stack.layers().len();
        let doc = super::Document {
            mask: Rc::new(union),
            labels: None,
            provenance: None,
            stack: Some(Rc::new((stack, StackMode::Once))),
        };
        self.commit(doc);
        self.view = super::View::Editor;
        self.editor.layer = self.editor.layer.min(self.max_layer());
        let images = match self.models.run_images().len() {
            0 => String::new(),
            1 => ", 1 image span".to_string(),
            k => format!(", {k} image spans"),
        };
        self.info(format!(
            "opened {} — {}{images}: the grid shows the union of its {layers} layers (its closure is the model's limit); the Flow view runs the {layers}-layer stack.",
            self.models.choice.spec.name, scaled.summary
        ));
    }
}
