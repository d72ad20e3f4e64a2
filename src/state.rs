//! The app's single store: [`AppState`] and the closed [`Action`] enum, reduced by a pure
//! function that calls the core. Plain Rust with no UI or browser types, so `cargo test -p
//! hasseflow-app` tests it natively; the wasm shell wraps it in `use_reducer`.
//!
//! The clock is injected ([`AppState::new`] takes a `fn() -> f64` in milliseconds) so the time
//! of each analysis can be shown without this module reading a clock itself.

use std::collections::BTreeMap;
use std::rc::Rc;

use hasseflow_core::format::{FormatError, InputError, MaskFile, Provenance, parse_mask_file};
use hasseflow_core::interop::{self, BlockStats, ExportKind};
use hasseflow_core::presets::{build_preset, preset_labels};
use hasseflow_core::{Analysis, BitMatrix, FirstReach, LayerStack, SparsifyOptions, StackMode, densify, sparsify};

use crate::share;

mod designer;
mod flow;
mod models;
pub use designer::{Design, FamilySpec, MAX_DESIGN_N, MAX_SAVED_FAMILY_BYTES, MAX_TASKS_DRAWN, View};
pub use flow::{
    AdapterSeen, BackendChoice, BackendPlan, FlowKey, FlowMap, FlowOutcome, FlowRequest, FlowRun, FlowSettings,
    FlowSource, FlowState, FlowStatus, LayerPicture, MAX_FLOW_N, SideView, THRESHOLDS, check_threshold, plan_backend,
};
pub use models::{
    DEFAULT_MODEL_N, HEAT_CELLS, HeatPicture, HeatView, MAX_MODEL_N, ModelChoice, ModelKey, ModelOutcome, ModelRequest,
    ModelStatus, ModelsState,
};

/// Largest mask side the editor accepts (files and links above it are refused with a message).
pub const MAX_EDIT_N: usize = 512;
// Every mask the editor holds can run in the Flow view.
const _: () = assert!(MAX_EDIT_N <= MAX_FLOW_N);
/// Undo steps kept.
pub const UNDO_LIMIT: usize = 200;

/// What a pointer stroke on the grid does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// Set cells.
    Draw,
    /// Clear cells.
    Erase,
    /// Give every stroked cell the opposite of the first cell's value.
    Toggle,
    /// Fill (or clear, when the anchor is set) the rectangle from the anchor to the pointer.
    Rect,
    /// Fill (or clear, when full) whole rows.
    Row,
    /// Fill (or clear, when full) whole columns.
    Column,
    /// Fill (or clear) the diagonals `q - k = d` between the anchor's and the pointer's offset.
    Band,
}

impl Tool {
    /// All tools, in toolbar order, with their keyboard shortcut.
    pub const ALL: [(Tool, &'static str, char); 7] = [
        (Tool::Draw, "Draw", 'd'),
        (Tool::Erase, "Erase", 'e'),
        (Tool::Toggle, "Toggle", 't'),
        (Tool::Rect, "Rectangle", 'r'),
        (Tool::Row, "Row", 'w'),
        (Tool::Column, "Column", 'c'),
        (Tool::Band, "Diagonal band", 'b'),
    ];
}

/// Which relation the order view draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderView {
    /// Covering pairs only.
    Hasse,
    /// Every comparable pair of classes.
    Full,
}

/// The edited document: the mask, its labels, and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// The mask (`M[q][k]`: `q` reads `k`).
    pub mask: Rc<BitMatrix>,
    /// One label per position, if any.
    pub labels: Option<Rc<Vec<String>>>,
    /// The preset that made it, until the first edit.
    pub provenance: Option<Provenance>,
    /// A per-layer stack from the file, kept (and exported) as it came: edits of the grid change
    /// the mask, not the stack; the Flow view can run it.
    pub stack: Option<Rc<(LayerStack, StackMode)>>,
}

impl Document {
    /// A document holding `mask` only.
    pub fn new(mask: BitMatrix) -> Self {
        Document { mask: Rc::new(mask), labels: None, provenance: None, stack: None }
    }

    /// A document holding everything `file` has.
    pub fn from_file(file: MaskFile) -> Self {
        Document {
            mask: Rc::new(file.mask),
            labels: file.labels.map(Rc::new),
            provenance: file.provenance,
            stack: file.stack.map(Rc::new),
        }
    }

    /// This document with its mask replaced by an edit: labels and stack stay, the provenance
    /// goes (the mask is no longer the preset's).
    pub fn edited(&self, mask: BitMatrix) -> Self {
        Document { mask: Rc::new(mask), labels: self.labels.clone(), provenance: None, stack: self.stack.clone() }
    }

    /// The mask file to export.
    pub fn to_file(&self) -> MaskFile {
        MaskFile {
            mask: (*self.mask).clone(),
            labels: self.labels.as_ref().map(|l| (**l).clone()),
            provenance: self.provenance.clone(),
            stack: self.stack.as_deref().cloned(),
        }
    }
}

/// Everything derived from one mask, computed once per revision.
///
/// The width (a matching) and the kernel verdicts are not needed while a stroke paints, so during
/// a stroke they are carried over from the mask before it (`pending`) and computed when the stroke
/// ends ([`Derived::settled`]); the block statistics likewise.
#[derive(Clone, Debug)]
pub struct Derived {
    /// Closure, classes, Hasse diagram, `L*`, growth.
    pub analysis: Analysis,
    /// First-reach layer of every cell.
    pub first_reach: FirstReach,
    /// Width of the class order.
    pub width: usize,
    /// Milliseconds the analysis took (by the injected clock).
    pub millis: f64,
    /// Whether FlashAttention `(causal, window_size)` represents the mask, in words.
    pub flash: String,
    /// Whether FlashMask column intervals represent the mask, in words.
    pub flashmask: String,
    /// `width`, `flash` and `flashmask` belong to the mask before the current stroke.
    pub pending: bool,
}

impl Derived {
    /// Analyses `mask`, timing it with `clock`.
    pub fn compute(mask: &BitMatrix, clock: fn() -> f64) -> Derived {
        Derived::analyse(mask, clock).settled(mask)
    }

    /// The analysis of `mask` (timed), with the width and verdicts of `before` carried over.
    fn during_stroke(mask: &BitMatrix, clock: fn() -> f64, before: &Derived) -> Derived {
        Derived {
            width: before.width,
            flash: before.flash.clone(),
            flashmask: before.flashmask.clone(),
            ..Derived::analyse(mask, clock)
        }
    }

    fn analyse(mask: &BitMatrix, clock: fn() -> f64) -> Derived {
        let start = clock();
        // One layer sweep serves both: the analysis takes L* and growth from the first-reach matrix.
        let first_reach = FirstReach::new(mask);
        let analysis = Analysis::new(mask).with_first_reach(&first_reach);
        let millis = clock() - start;
        Derived {
            analysis,
            first_reach,
            width: 0,
            millis,
            flash: String::new(),
            flashmask: String::new(),
            pending: true,
        }
    }

    /// With the width and kernel verdicts of `mask` (the mask analysed).
    fn settled(self, mask: &BitMatrix) -> Derived {
        let width = self.analysis.width();
        let flash = match interop::flash_window(mask) {
            Ok(w) => format!("yes: {}", w.call()),
            Err(e) => format!("no: {}", e.reason),
        };
        let flashmask = match interop::flashmask_columns(mask) {
            Ok(c) => format!("yes: {} of the columns [LTS, LTE, UTS, UTE] needed", c.columns_needed()),
            Err(e) => format!("no: {}", e.reason),
        };
        Derived { width, flash, flashmask, pending: false, ..self }
    }
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

/// An in-progress pointer stroke.
#[derive(Clone, Debug, PartialEq)]
pub struct Stroke {
    /// The first cell.
    pub anchor: (usize, usize),
    /// The value the stroke writes.
    pub value: bool,
    /// The document before the stroke (the undo step, and the base of shape tools).
    pub before: Document,
}

/// Undo and redo stacks (shared, so cloning the state for a hover is cheap).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    undo: Vec<Document>,
    redo: Vec<Document>,
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
    clock: fn() -> f64,
}

/// The block size used until the user picks one: FlexAttention's 128, smaller for small masks
/// so the tiles say something (`min(128, max(1, n / 8))`).
pub fn default_block_size(n: usize) -> usize {
    (n / 8).clamp(1, 128)
}

fn stats_of(mask: &BitMatrix, block_size: usize) -> Rc<BlockStats> {
    // The block size is clamped to 1..=n before this, which block_stats accepts.
    Rc::new(interop::block_stats(mask, block_size.clamp(1, mask.n().max(1))).unwrap_or_else(|_| BlockStats {
        n: mask.n(),
        block_size,
        blocks: 0,
        rows: Vec::new(),
        total: Default::default(),
        sparsity: 0.0,
        computed_fraction: 0.0,
        mask_fraction: 0.0,
        grid: Vec::new(),
    }))
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
    /// Import pasted text (a `mask_mod`, mask JSON or a grid); a `mask_mod` is evaluated at `n`.
    ImportText {
        /// What it was, for messages.
        name: String,
        /// The text.
        text: String,
        /// The size to evaluate a `mask_mod` at (or to build a FlashAttention window at).
        n: usize,
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
    /// Set the context length and the document lengths (comma list, empty: one document), as
    /// typed; refused together with a message when either is unusable.
    SetModelContext {
        /// The context length as typed.
        n: String,
        /// The document lengths as typed.
        docs: String,
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

    /// The key of the flow run the current mask and settings need (`None` when the mask is too
    /// large for the model).
    pub fn flow_key(&self) -> Option<FlowKey> {
        self.flow.key(self.revision, self.n(), self.doc.stack.is_some())
    }

    /// What the flow model reads for `key`: the document's stack or its mask.
    fn flow_source(&self, key: &FlowKey) -> FlowSource {
        match (&self.doc.stack, key.stack) {
            (Some(stack), true) => FlowSource::Stack(stack.clone()),
            _ => FlowSource::Mask(self.doc.mask.clone()),
        }
    }

    /// The model run the shell should start now: the Models view is shown and the current key
    /// has neither its outcome nor a failure.
    pub fn model_request(&self) -> Option<ModelRequest> {
        let m = &self.models;
        let wanted = self.view == View::Models && !m.up_to_date() && !matches!(m.status_now(), ModelStatus::Failed(_));
        wanted.then(|| m.request())
    }

    /// The flow run the shell should start now: the Flow view is shown, no stroke is in progress,
    /// and the current key has neither an outcome nor a failure.
    pub fn flow_request(&self) -> Option<FlowRequest> {
        let key = self.flow_key()?;
        let wanted = self.view == View::Editor
            && self.side == SideView::Flow
            && self.stroke.is_none()
            && self.flow.current(Some(key)).is_none()
            && !matches!(self.flow.status_for(Some(key)), FlowStatus::Failed(_));
        wanted.then(|| FlowRequest { key, source: self.flow_source(&key) })
    }

    /// The model layer the Flow view shows for the shared layer `L` (`None` at `L = 0`, the
    /// inputs; layers past the model's last show its last).
    pub fn flow_layer(&self) -> Option<usize> {
        (self.layer >= 1).then(|| self.layer.min(self.flow.settings.config.layers))
    }

    /// Whether the shown layer has reached the limit.
    pub fn converged(&self) -> bool {
        self.layer >= self.derived.analysis.depth()
    }

    /// The block size in use: the user's choice (at most `n`) or the default for `n`.
    pub fn effective_block_size(&self) -> usize {
        self.block_size.unwrap_or_else(|| default_block_size(self.n())).clamp(1, self.n().max(1))
    }

    /// The bytes of one export of the document, from `core::interop::export` (block size: the
    /// overlay's).
    ///
    /// # Errors
    /// The core's export error, in words.
    pub fn export_bytes(&self, kind: ExportKind) -> Result<Vec<u8>, String> {
        interop::export(&self.doc.to_file(), kind, self.effective_block_size()).map_err(|e| e.to_string())
    }

    /// Whether there is something to undo / redo.
    pub fn can_undo(&self) -> bool {
        !self.history.undo.is_empty()
    }
    /// See [`AppState::can_undo`].
    pub fn can_redo(&self) -> bool {
        !self.history.redo.is_empty()
    }

    /// The designer link's fragment of the shown derivation (built-in families only: a family
    /// file may be large, and is shared as a file), computed once with the derivation.
    ///
    /// # Errors
    /// No derivation yet, or a family file.
    pub fn design_fragment(&self) -> Result<String, String> {
        self.design.as_ref().map_or_else(|| Err("derive a family first".into()), |d| d.link.clone())
    }

    /// The share-link fragment of the current mask and its labels.
    pub fn share_fragment(&self) -> String {
        share::encode(&self.doc.mask, self.doc.labels.as_deref().map(Vec::as_slice))
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

    /// Replaces the document as one undo step (no step when nothing changed).
    fn commit(&mut self, doc: Document) {
        if doc == self.doc {
            return;
        }
        let old = std::mem::replace(&mut self.doc, doc);
        let h = Rc::make_mut(&mut self.history);
        h.undo.push(old);
        if h.undo.len() > UNDO_LIMIT {
            h.undo.remove(0);
        }
        h.redo.clear();
        self.refresh();
    }

    /// Replaces the document without touching history (during a stroke, undo, redo).
    fn set_live(&mut self, doc: Document) {
        if doc != self.doc {
            self.doc = doc;
            self.refresh();
        }
    }

    fn refresh(&mut self) {
        self.revision += 1;
        if self.stroke.is_some() {
            // Mid-stroke: only what the grid and the order view draw.
            self.derived = Rc::new(Derived::during_stroke(&self.doc.mask, self.clock, &self.derived));
        } else {
            self.derived = Rc::new(Derived::compute(&self.doc.mask, self.clock));
            self.blocks = stats_of(&self.doc.mask, self.effective_block_size());
        }
        self.layer = self.layer.min(self.max_layer());
        if self.hover_class.is_some_and(|c| c >= self.derived.analysis.classes().len()) {
            self.hover_class = None;
        }
        if self.hover_cell.is_some_and(|(q, k)| q >= self.n() || k >= self.n()) {
            self.hover_cell = None;
        }
    }

    /// After a stroke: the width, kernel verdicts and block statistics of the mask it left.
    fn settle(&mut self) {
        if self.derived.pending {
            // The components may still hold this Rc: settle a copy (once per stroke).
            self.derived = Rc::new(Derived::clone(&self.derived).settled(&self.doc.mask));
            self.blocks = stats_of(&self.doc.mask, self.effective_block_size());
        }
    }

    fn error(&mut self, text: String) {
        self.message = Some(Message { level: Level::Error, text });
    }

    fn info(&mut self, text: String) {
        self.message = Some(Message { level: Level::Info, text });
    }

    /// Applies the current stroke from its anchor to `(q, k)` on top of the pre-stroke document.
    fn paint(&mut self, q: usize, k: usize) {
        let Some(stroke) = self.stroke.clone() else { return };
        let n = self.n();
        if q >= n || k >= n {
            return;
        }
        let v = stroke.value;
        let (aq, ak) = stroke.anchor;
        let shape = |m: &mut BitMatrix| match self.tool {
            Tool::Draw | Tool::Erase | Tool::Toggle => m.set(q, k, v),
            Tool::Rect => {
                for r in aq.min(q)..=aq.max(q) {
                    for c in ak.min(k)..=ak.max(k) {
                        m.set(r, c, v);
                    }
                }
            }
            Tool::Row => {
                for r in aq.min(q)..=aq.max(q) {
                    for c in 0..n {
                        m.set(r, c, v);
                    }
                }
            }
            Tool::Column => {
                for c in ak.min(k)..=ak.max(k) {
                    for r in 0..n {
                        m.set(r, c, v);
                    }
                }
            }
            Tool::Band => {
                let (d0, d1) = (aq as isize - ak as isize, q as isize - k as isize);
                for d in d0.min(d1)..=d0.max(d1) {
                    for r in 0..n as isize {
                        let c = r - d;
                        if (0..n as isize).contains(&c) {
                            m.set(r as usize, c as usize, v);
                        }
                    }
                }
            }
        };
        // Free-hand tools accumulate over the live mask; shape tools redraw from the base.
        let mut m = match self.tool {
            Tool::Draw | Tool::Erase | Tool::Toggle => (*self.doc.mask).clone(),
            _ => (*stroke.before.mask).clone(),
        };
        shape(&mut m);
        if m != *self.doc.mask {
            let doc = self.doc.edited(m);
            self.set_live(doc);
        }
    }

    fn load_file(&mut self, file: MaskFile, what: &str) -> bool {
        let n = file.mask.n();
        if n > MAX_EDIT_N {
            self.error(format!(
                "{what}: the mask has n = {n}; the editor handles up to {MAX_EDIT_N}. Nothing was changed."
            ));
            return false;
        }
        let stack = match &file.stack {
            Some((st, _)) => {
                format!(" with a {}-layer stack (kept in exports; the Flow view can run it)", st.layers().len())
            }
            None => String::new(),
        };
        self.commit(Document::from_file(file));
        self.info(format!("{what}: loaded a {n} x {n} mask{stack}."));
        true
    }

    /// Reads any input the core's importer knows; a refused one changes nothing.
    fn import(&mut self, name: &str, bytes: &[u8], size: interop::SizeHint) {
        match interop::import_mask(bytes, size) {
            Err(interop::ImportError::Format(e)) => {
                self.error(format!("could not import {name}: {}. Nothing was changed.", explain(&e)))
            }
            Err(e) => self.error(format!("could not import {name}: {e}. Nothing was changed.")),
            Ok((file, source)) => {
                let what = match source {
                    interop::Source::Kernel { sized: true } => {
                        format!("imported the FlashAttention window {name} at the editor's size")
                    }
                    interop::Source::Kernel { sized: false } => format!("imported the kernel parameters {name}"),
                    interop::Source::MaskMod { name: f, n } => {
                        format!("imported mask_mod `{f}` from {name} at n = {n}")
                    }
                    interop::Source::Npy | interop::Source::MaskFile => format!("imported {name}"),
                };
                self.load_file(file, &what);
            }
        }
    }

    /// Applies `action`; pure apart from the injected clock.
    pub fn apply(&mut self, action: Action) {
        match action {
            Action::StrokeStart(q, k) => {
                let n = self.n();
                if q >= n || k >= n {
                    return;
                }
                let m = &self.doc.mask;
                let value = match self.tool {
                    Tool::Draw => true,
                    Tool::Erase => false,
                    Tool::Toggle | Tool::Rect | Tool::Band => !m.get(q, k),
                    Tool::Row => m.row_count(q) < n,
                    Tool::Column => (0..n).any(|r| !m.get(r, k)),
                };
                self.stroke = Some(Stroke { anchor: (q, k), value, before: self.doc.clone() });
                self.paint(q, k);
            }
            Action::StrokeMove(q, k) => self.paint(q, k),
            Action::StrokeEnd => {
                self.settle();
                if let Some(stroke) = self.stroke.take()
                    && stroke.before != self.doc
                {
                    let h = Rc::make_mut(&mut self.history);
                    h.undo.push(stroke.before);
                    if h.undo.len() > UNDO_LIMIT {
                        h.undo.remove(0);
                    }
                    h.redo.clear();
                }
            }
            Action::StrokeCancel => {
                if let Some(stroke) = self.stroke.take() {
                    self.set_live(stroke.before);
                }
                self.settle();
            }
            Action::SetTool(t) => self.tool = t,
            Action::Undo => {
                self.stroke = None;
                let h = Rc::make_mut(&mut self.history);
                if let Some(prev) = h.undo.pop() {
                    h.redo.push(self.doc.clone());
                    self.set_live(prev);
                }
            }
            Action::Redo => {
                self.stroke = None;
                let h = Rc::make_mut(&mut self.history);
                if let Some(next) = h.redo.pop() {
                    h.undo.push(self.doc.clone());
                    self.set_live(next);
                }
            }
            Action::Resize(m) => {
                if m == 0 || m > MAX_EDIT_N {
                    self.error(format!("size must be between 1 and {MAX_EDIT_N}; got {m}"));
                    return;
                }
                let labels = self.doc.labels.as_ref().map(|l| {
                    Rc::new((0..m).map(|i| l.get(i).cloned().unwrap_or_else(|| i.to_string())).collect::<Vec<_>>())
                });
                let old_n = self.n();
                let dropped = self.doc.stack.is_some() && m != old_n;
                let stack = if dropped { None } else { self.doc.stack.clone() };
                self.commit(Document { mask: Rc::new(self.doc.mask.resized(m)), labels, provenance: None, stack });
                if dropped {
                    self.info(format!(
                        "the layer stack has {old_n} x {old_n} masks, so resizing to {m} dropped it (undo brings it back)."
                    ));
                }
            }
            Action::Transpose => self.edit(|m| m.transpose()),
            Action::Invert => self.edit(|m| m.not()),
            Action::Densify => self.edit(densify),
            Action::Sparsify => {
                let options = self.sparsify;
                self.edit(|m| sparsify(m, options));
            }
            Action::SetSparsify(o) => self.sparsify = o,
            Action::Clear => self.edit(|m| BitMatrix::zeros(m.n())),
            Action::LoadPreset { name, n, params } => match build_preset(&name, n, &params, MAX_EDIT_N) {
                Err(e) => self.error(format!("{e}. Nothing was changed.")),
                Ok(mask) => {
                    let size = mask.n();
                    // Two-stream, Butterfly and XLNet name their positions (w/m, F/B/P, h/g).
                    let labels = preset_labels(&name, n, &params, MAX_EDIT_N).ok().flatten().map(Rc::new);
                    let params = params.into_iter().map(|(k, v)| (k, serde_json_value(&v))).collect();
                    self.commit(Document {
                        mask: Rc::new(mask),
                        labels,
                        provenance: Some(Provenance { preset: name.clone(), n, params }),
                        stack: None,
                    });
                    self.info(format!("preset {name}: {size} positions."));
                }
            },
            // A file: FlashMask files and mask_mods with `N = ...` record their size, a FlashAttention
            // window or a mask_mod without one takes the editor's. Pasted text: the size typed beside it.
            Action::Import { name, bytes } => self.import(&name, &bytes, interop::SizeHint::Fallback(self.n())),
            Action::ImportText { name, text, n } => self.import(&name, text.as_bytes(), interop::SizeHint::Given(n)),
            Action::LoadShared(fragment)
                if fragment.strip_prefix('#').unwrap_or(&fragment).starts_with(share::DESIGN_PREFIX) =>
            {
                let data = fragment.strip_prefix('#').unwrap_or(&fragment)[share::DESIGN_PREFIX.len()..].to_string();
                match share::decode_design(&data).and_then(|json| FamilySpec::from_json(&json)) {
                    Err(e) => self.error(format!("the design link is damaged: {e}. Nothing was changed.")),
                    Ok(spec) => {
                        self.view = View::Designer;
                        self.apply(Action::Derive(spec));
                    }
                }
            }
            Action::LoadShared(fragment) => match share::decode(&fragment) {
                Err(e) => self.error(format!("the share link is damaged: {e}. Nothing was changed.")),
                Ok(shared) => {
                    self.load_file(MaskFile { labels: shared.labels, ..MaskFile::new(shared.mask) }, "share link");
                }
            },
            Action::Restore(json) => match parse_mask_file(json.as_bytes()) {
                Ok(file) if file.mask.n() <= MAX_EDIT_N => {
                    self.set_live(Document::from_file(file));
                    self.info("restored your autosaved mask.".into());
                }
                Ok(_) => self.error("the autosaved mask is too large for the editor; it was ignored.".into()),
                Err(e) => self.error(format!("the autosaved mask is unreadable ({e}); it was ignored.")),
            },
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
            Action::SetSideView(v) => {
                self.side = v;
                self.layer = self.layer.min(self.max_layer());
            }
            Action::SetFlowSettings(settings) => {
                let checked = settings.config.validate().map_err(|e| e.to_string());
                if let Err(e) = checked.and_then(|()| check_threshold(settings.threshold)) {
                    self.error(format!("flow model: {e}. The settings were not changed."));
                    return;
                }
                self.flow.settings.config = settings.config;
                self.flow.settings.backend = settings.backend;
                self.flow.settings.use_stack = settings.use_stack;
                self.flow.set_threshold(settings.threshold);
                self.layer = self.layer.min(self.max_layer());
            }
            Action::FlowProgress { key, progress } => {
                let current = self.flow_key();
                self.flow.report_status(key, current, FlowStatus::Running(progress.clamp(0.0, 1.0)));
            }
            Action::FlowFinished { key, run } => {
                let current = self.flow_key();
                let source = self.flow_source(&key);
                self.flow.finish(key, current, &source, run);
            }
            Action::FlowFailed { key, error } => {
                let current = self.flow_key();
                self.flow.report_status(key, current, FlowStatus::Failed(error));
            }
            Action::SetFlowMap(m) => self.flow.map = m,
            Action::RetryFlow => {
                self.flow.status_key = None;
                self.flow.status = FlowStatus::Idle;
            }
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
            Action::SetBlockSize(b) => {
                self.block_size = Some(b.clamp(1, self.n().max(1)));
                self.blocks = stats_of(&self.doc.mask, self.effective_block_size());
            }
        }
    }

    fn edit(&mut self, f: impl FnOnce(&BitMatrix) -> BitMatrix) {
        let mask = f(&self.doc.mask);
        self.commit(self.doc.edited(mask));
    }
}

/// Provenance keeps parameters as JSON values: integers and booleans as such, the rest as text.
fn serde_json_value(text: &str) -> serde_json::Value {
    if let Ok(i) = text.parse::<u64>() {
        serde_json::Value::from(i)
    } else if let Ok(b) = text.parse::<bool>() {
        serde_json::Value::Bool(b)
    } else {
        serde_json::Value::String(text.to_string())
    }
}

/// A format error in words, with a hint for the common mistakes.
fn explain(e: &FormatError) -> String {
    match e {
        FormatError::Input(InputError::TooLarge { .. }) => {
            format!("{e} (the editor handles masks up to {MAX_EDIT_N} x {MAX_EDIT_N})")
        }
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod models_tests;
#[cfg(test)]
mod tests;
