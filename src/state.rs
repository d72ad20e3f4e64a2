//! The app's single store: [`AppState`] and the closed [`Action`] enum, reduced by a pure
//! function that calls the core. Plain Rust with no UI or browser types, so `cargo test -p
//! hasseflow-app` tests it natively; the wasm shell wraps it in `use_reducer`.
//!
//! The clock is injected ([`AppState::new`] takes a `fn() -> f64` in milliseconds) so the time
//! of each analysis can be shown without this module reading a clock itself.
//!
//! [`AppState::apply`] hands each group of actions to the module that owns it: `document` (the
//! document, derived data, undo history), `tools` (strokes and edits), `import` (presets, files,
//! links, autosave, exports), `designer`, `flow` and `models` (their views' state).

use std::collections::BTreeMap;
use std::rc::Rc;

use hasseflow_core::interop::BlockStats;
use hasseflow_core::presets::build_preset;
use hasseflow_core::{BitMatrix, SparsifyOptions};

mod designer;
mod document;
mod flow;
mod import;
mod layer_kinds;
mod models;
pub mod pictures;
mod tools;
pub use designer::{
    Design, FamilySpec, LinkError, MAX_DESIGN_N, MAX_SAVED_FAMILY_BYTES, MAX_TASKS_DRAWN, SavedFamilyError, View,
};
use document::stats_of;
pub use document::{Derived, Document, History, UNDO_LIMIT, default_block_size};
pub use flow::{
    AdapterSeen, BackendChoice, BackendPlan, FlowKey, FlowMap, FlowOutcome, FlowRequest, FlowRun, FlowSettings,
    FlowSource, FlowState, FlowStatus, LayerPicture, MAX_FLOW_N, SideView, THRESHOLDS, ThresholdError, check_threshold,
    plan_backend,
};
pub use import::{PasteRefusal, REFUSAL_WIDTH};
pub use layer_kinds::{
    KindEntry, LayerLegend, LayerRole, clipped, describe, gallery_options, kind_family, pattern_line,
};
pub use models::{
    ContextError, DEFAULT_MODEL_N, HEAT_CELLS, HeatPicture, HeatView, MAX_MODEL_N, ModelChoice, ModelKey, ModelOutcome,
    ModelRequest, ModelStatus, ModelsState, run_error,
};
pub use tools::{Stroke, Tool};

/// Largest mask side the editor accepts (files and links above it are refused with a message).
pub const MAX_EDIT_N: usize = 512;
// Every mask the editor holds can run in the Flow view.
const _: () = assert!(MAX_EDIT_N <= MAX_FLOW_N);

/// Which relation the order view draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderView {
    /// Covering pairs only.
    Hasse,
    /// Every comparable pair of classes.
    Full,
}

/// How serious a message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Something was done.
    Info,
    /// Something was refused; nothing changed.
    Error,
}

/// A message shown to the user until dismissed or replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Severity.
    pub level: Level,
    /// Text (shown as text).
    pub text: String,
}

/// The whole app state.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The document being edited.
    pub doc: Document,
    /// Bumped on every change of `doc`; keys derived data.
    pub revision: u64,
    /// Analysis of `doc.mask`.
    pub derived: Rc<Derived>,
    history: Rc<History>,
    /// The active tool.
    pub tool: Tool,
    /// The current stroke, between pointer down and up.
    pub stroke: Option<Stroke>,
    /// The layer `L` shown (0..=L*+1).
    pub layer: usize,
    /// Whether the layer animation runs.
    pub playing: bool,
    /// The latest message.
    pub message: Option<Message>,
    /// Where the latest pasted text was refused (its line and column), for the paste box; cleared
    /// by a successful import and replaced by the next paste.
    pub paste_refusal: Option<Rc<PasteRefusal>>,
    /// The hovered cell `(q, k)`.
    pub hover_cell: Option<(usize, usize)>,
    /// The hovered class in the order view.
    pub hover_class: Option<usize>,
    /// Hasse or full order.
    pub order_view: OrderView,
    /// Options of the sparsify button.
    pub sparsify: SparsifyOptions,
    /// The block size chosen by the user (`None`: [`default_block_size`] of `n`).
    pub block_size: Option<usize>,
    /// Whether the grid shows the block-sparsity overlay.
    pub show_blocks: bool,
    /// Block statistics of the mask at [`AppState::effective_block_size`].
    pub blocks: Rc<BlockStats>,
    /// Editor or designer.
    pub view: View,
    /// The latest successful derivation in the designer.
    pub design: Option<Rc<Design>>,
    /// The hovered merged node in the designer (its equivalents light up in every task).
    pub design_hover: Option<usize>,
    /// Successful derivations so far (tells one result from the next, even an identical one).
    pub design_seq: u64,
    /// An autosaved family, derived when the designer is first opened.
    pub pending_design: Option<FamilySpec>,
    /// The order view or the Flow view beside the grid.
    pub side: SideView,
    /// The Flow view's settings and latest run.
    pub flow: FlowState,
    /// The Models view: model, context, documents, latest run.
    pub models: ModelsState,
    /// Actions applied so far: the state is unchanged while this is (the shell's page components
    /// compare it instead of the whole state).
    pub actions: u64,
    clock: fn() -> f64,
}

/// Everything that can happen. Closed: the reducer handles each one.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Pointer down on a cell.
    StrokeStart(usize, usize),
    /// Pointer moved onto a cell while down.
    StrokeMove(usize, usize),
    /// Pointer up or cancelled.
    StrokeEnd,
    /// Abandon the stroke: the document goes back to what it was before it, with no undo step
    /// (a second finger turned the touch into a pinch).
    StrokeCancel,
    /// Choose a tool.
    SetTool(Tool),
    /// Undo the last change.
    Undo,
    /// Redo the last undone change.
    Redo,
    /// Crop or extend to `n` positions, keeping the top-left corner.
    Resize(usize),
    /// Transpose the mask (reverses every Hasse edge).
    Transpose,
    /// Complement every cell.
    Invert,
    /// Replace the mask by its closure.
    Densify,
    /// Replace the mask by its sparsification with the current options.
    Sparsify,
    /// Set the sparsify options.
    SetSparsify(SparsifyOptions),
    /// Clear every cell.
    Clear,
    /// Build a catalog preset.
    LoadPreset {
        /// Preset name.
        name: String,
        /// Tokens.
        n: usize,
        /// Parameters as text.
        params: BTreeMap<String, String>,
    },
    /// Import a file's bytes.
    Import {
        /// File name, for messages.
        name: String,
        /// Contents.
        bytes: Vec<u8>,
    },
    /// Import pasted text (a `mask_mod`, mask JSON or a grid); a `mask_mod` is evaluated at `n`,
    /// batch `batch` and head `head` (`create_mask(...)[batch, head]`). A `mask_mod` refused at a
    /// place is kept as [`AppState::paste_refusal`] for the paste box to show.
    ImportText {
        /// What it was, for messages.
        name: String,
        /// The text.
        text: String,
        /// The size to evaluate a `mask_mod` at (or to build a FlashAttention window at).
        n: usize,
        /// The batch index `b` a `mask_mod` is evaluated at.
        batch: u64,
        /// The head index `h` a `mask_mod` is evaluated at.
        head: u64,
    },
    /// Load a share link's fragment (without `#`).
    LoadShared(String),
    /// Restore the autosaved JSON (no undo step; a broken save is reported and ignored).
    Restore(String),
    /// Show layer `L` (clamped to `0..=L*+1`).
    SetLayer(usize),
    /// Step the layer by one up or down.
    StepLayer(i32),
    /// Start or stop the animation.
    TogglePlay,
    /// One animation tick.
    Tick,
    /// Hover a cell (or leave the grid).
    HoverCell(Option<(usize, usize)>),
    /// Hover a class (or leave it).
    HoverClass(Option<usize>),
    /// Switch the order view.
    SetOrderView(OrderView),
    /// Show a message (from IO in the shell: clipboard, downloads).
    Notify(Level, String),
    /// Hide the message.
    Dismiss,
    /// Show or hide the block-sparsity overlay.
    SetShowBlocks(bool),
    /// Set the block size of the overlay, statistics and exports (1..=n; 0 or more is clamped).
    SetBlockSize(usize),
    /// Show the editor or the designer.
    SetView(View),
    /// Derive a family's minimal merged task (a refused family leaves the last design as it was).
    Derive(FamilySpec),
    /// Restore the designer's autosaved family (JSON of [`FamilySpec::to_json`]); it is derived
    /// when the designer opens. A broken save is reported and ignored.
    RestoreDesign(String),
    /// Hover a merged node in the designer (or leave it).
    HoverMerged(Option<usize>),
    /// Load the derived dense mask, with its position labels, into the editor (one undo step).
    OpenDerived,
    /// Show the order view or the Flow view beside the grid.
    SetSideView(SideView),
    /// Change the flow model's settings (refused with a message when out of range).
    SetFlowSettings(FlowSettings),
    /// A running flow computation's progress (dropped when `key` is no longer current).
    FlowProgress {
        /// What the run computes.
        key: FlowKey,
        /// Fraction done.
        progress: f64,
    },
    /// A flow computation finished (dropped when `key` is no longer current).
    FlowFinished {
        /// What the run computed.
        key: FlowKey,
        /// Its result.
        run: FlowRun,
    },
    /// A flow computation failed (dropped when `key` is no longer current).
    FlowFailed {
        /// What the run was computing.
        key: FlowKey,
        /// Why it failed, in words.
        error: String,
    },
    /// Try the failed flow run again.
    RetryFlow,
    /// Show the measured influence or the attention rollout on the Flow view's map.
    SetFlowMap(FlowMap),
    /// Run a gallery model in the Models view (by name).
    SelectModel(String),
    /// Run a `config.json` (a file, a drop or pasted text) in the Models view; a refused config
    /// leaves the current model and its report as they were.
    LoadModelConfig {
        /// File name (or "pasted config"), for messages and the report's source.
        name: String,
        /// Contents.
        bytes: Vec<u8>,
    },
    /// Set the context length, the document lengths (comma list, empty: one document) and an
    /// encoder-decoder's encoder length (empty: the context length), as typed; refused together
    /// with a message when any is unusable.
    SetModelContext {
        /// The context length as typed (an encoder-decoder's decoder length).
        n: String,
        /// The document lengths as typed.
        docs: String,
        /// The encoder length as typed (read for an encoder-decoder only).
        encoder: String,
    },
    /// Show layer `l` of the model (clamped to its layers).
    SetModelLayer(usize),
    /// Zoom the heatmap by `factor` (above 1: closer) about the point at fractions `(fq, fk)`
    /// of the visible query and key ranges.
    ZoomModel {
        /// Zoom factor.
        factor: f64,
        /// Fraction of the query range (0: first row, 1: last).
        fq: f64,
        /// Fraction of the key range.
        fk: f64,
    },
    /// Show every position in the heatmap again.
    ResetModelZoom,
    /// A model run's progress (dropped when `key` is no longer current).
    ModelProgress {
        /// What the run computes.
        key: ModelKey,
        /// Layers done.
        done: usize,
        /// Layers in all.
        total: usize,
    },
    /// A model run finished (dropped when `key` is no longer current).
    ModelFinished {
        /// What the run computed.
        key: ModelKey,
        /// The core's run.
        run: Rc<hasseflow_core::model::ModelRun>,
        /// Milliseconds it took.
        millis: f64,
    },
    /// A model run failed (dropped when `key` is no longer current).
    ModelFailed {
        /// What the run was computing.
        key: ModelKey,
        /// Why, in words.
        error: String,
    },
    /// Try the failed model run again.
    RetryModel,
    /// Open the model scaled down to the editor's size as a new document with its layer stack
    /// (one undo step).
    OpenScaledModel,
}

impl AppState {
    /// A state holding `doc`, with `clock` timing analyses.
    pub fn new(doc: Document, clock: fn() -> f64) -> Self {
        let derived = Rc::new(Derived::compute(&doc.mask, clock));
        let blocks = stats_of(&doc.mask, default_block_size(doc.mask.n()));
        AppState {
            doc,
            revision: 0,
            derived,
            history: Rc::new(History::default()),
            tool: Tool::Draw,
            stroke: None,
            layer: 1,
            playing: false,
            message: None,
            paste_refusal: None,
            hover_cell: None,
            hover_class: None,
            order_view: OrderView::Hasse,
            sparsify: SparsifyOptions::default(),
            block_size: None,
            show_blocks: false,
            blocks,
            view: View::Editor,
            design: None,
            design_hover: None,
            design_seq: 0,
            pending_design: None,
            side: SideView::Order,
            flow: FlowState::default(),
            models: ModelsState::default(),
            actions: 0,
            clock,
        }
    }

    /// The start-up document: a causal mask on 8 positions.
    pub fn initial_document() -> Document {
        let params = BTreeMap::new();
        let mask = build_preset("causal", 8, &params, MAX_EDIT_N).unwrap_or_else(|_| BitMatrix::identity(8));
        Document::new(mask)
    }

    /// Side of the mask.
    pub fn n(&self) -> usize {
        self.doc.mask.n()
    }

    /// Largest layer the control offers: `L* + 1` (one past convergence shows nothing new), and
    /// in the Flow view at least the model's last layer.
    pub fn max_layer(&self) -> usize {
        let theory = self.derived.analysis.depth() + 1;
        if self.side == SideView::Flow { theory.max(self.flow.settings.config.layers) } else { theory }
    }

    /// Whether the shown layer has reached the limit.
    pub fn converged(&self) -> bool {
        self.layer >= self.derived.analysis.depth()
    }

    /// Classes on some path from the hovered cell's key class up to its query class (the
    /// interval `[class(k), class(q)]`), for lighting up the diagram. Empty when `q` never sees `k`.
    pub fn hovered_path(&self) -> Vec<bool> {
        let a = &self.derived.analysis;
        let mut lit = vec![false; a.classes().len()];
        if let Some((q, k)) = self.hover_cell
            && q < self.n()
            && k < self.n()
        {
            let (cq, ck) = (a.class_of()[q], a.class_of()[k]);
            if a.class_le(ck, cq) {
                for (c, slot) in lit.iter_mut().enumerate() {
                    *slot = a.class_le(ck, c) && a.class_le(c, cq);
                }
            }
        }
        lit
    }

    fn error(&mut self, text: String) {
        self.message = Some(Message { level: Level::Error, text });
    }

    fn info(&mut self, text: String) {
        self.message = Some(Message { level: Level::Info, text });
    }

    /// Applies `action`; pure apart from the injected clock.
    pub fn apply(&mut self, action: Action) {
        self.actions += 1;
        match action {
            Action::StrokeStart(..)
            | Action::StrokeMove(..)
            | Action::StrokeEnd
            | Action::StrokeCancel
            | Action::SetTool(_)
            | Action::Undo
            | Action::Redo
            | Action::Resize(_)
            | Action::Transpose
            | Action::Invert
            | Action::Densify
            | Action::Sparsify
            | Action::SetSparsify(_)
            | Action::Clear => self.apply_edit(action),
            Action::LoadPreset { .. }
            | Action::Import { .. }
            | Action::ImportText { .. }
            | Action::LoadShared(_)
            | Action::Restore(_) => self.apply_import(action),
            Action::SetLayer(l) => self.layer = l.min(self.max_layer()),
            Action::StepLayer(d) => {
                self.playing = false;
                let l = self.layer as i64 + i64::from(d);
                self.layer = l.clamp(0, self.max_layer() as i64) as usize;
            }
            Action::TogglePlay => {
                self.playing = !self.playing;
                if self.playing && self.layer >= self.max_layer() {
                    self.layer = 0;
                }
            }
            Action::Tick => {
                if self.playing {
                    if self.layer >= self.max_layer() {
                        self.playing = false;
                    } else {
                        self.layer += 1;
                    }
                }
            }
            Action::HoverCell(c) => self.hover_cell = c,
            Action::HoverClass(c) => self.hover_class = c,
            Action::SetOrderView(v) => self.order_view = v,
            Action::Notify(level, text) => self.message = Some(Message { level, text }),
            Action::Dismiss => self.message = None,
            Action::SetView(v) => {
                self.view = v;
                if v == View::Designer
                    && self.design.is_none()
                    && let Some(spec) = self.pending_design.take()
                {
                    self.apply(Action::Derive(spec));
                }
            }
            Action::RestoreDesign(json) => match FamilySpec::from_json(&json) {
                Ok(spec) => self.pending_design = Some(spec),
                Err(e) => self.error(format!("the autosaved design is unreadable ({e}); it was ignored.")),
            },
            Action::Derive(spec) => {
                let what = spec.describe();
                match Design::compute(spec, self.clock) {
                    Err(e) => self.error(format!("could not derive {what}: {e}. Nothing was changed.")),
                    Ok(design) => {
                        let r = design.derivation.report();
                        self.info(format!(
                            "derived {what}: {} nodes -> {}, {} positions.",
                            r.nodes_before, r.nodes_after, r.positions
                        ));
                        self.design = Some(Rc::new(design));
                        self.design_hover = None;
                        self.design_seq += 1;
                    }
                }
            }
            Action::HoverMerged(c) => {
                self.design_hover = c.filter(|&c| self.design.as_ref().is_some_and(|d| c < d.members.len()));
            }
            Action::OpenDerived => {
                let Some(design) = self.design.clone() else {
                    self.error("derive a family first.".into());
                    return;
                };
                // The core's mask file: labels and provenance as `derive --mask-out` writes them.
                let file = design.spec.mask_file(&design.derivation);
                if self.load_file(file, &format!("derived mask of {}", design.spec.describe())) {
                    self.view = View::Editor;
                }
            }
            Action::SetSideView(_)
            | Action::SetFlowSettings(_)
            | Action::FlowProgress { .. }
            | Action::FlowFinished { .. }
            | Action::FlowFailed { .. }
            | Action::SetFlowMap(_)
            | Action::RetryFlow => self.apply_flow(action),
            Action::SelectModel(_)
            | Action::LoadModelConfig { .. }
            | Action::SetModelContext { .. }
            | Action::SetModelLayer(_)
            | Action::ZoomModel { .. }
            | Action::ResetModelZoom
            | Action::ModelProgress { .. }
            | Action::ModelFinished { .. }
            | Action::ModelFailed { .. }
            | Action::RetryModel
            | Action::OpenScaledModel => self.apply_model(action),
            Action::SetShowBlocks(on) => self.show_blocks = on,
            Action::SetBlockSize(b) => self.set_block_size(b),
        }
    }
}

#[cfg(test)]
mod models_tests;
#[cfg(test)]
mod tests;
