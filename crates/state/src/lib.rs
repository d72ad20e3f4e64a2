//! The app's single store: [`AppState`] and the closed [`Action`] enum, reduced by a pure
//! function that calls the core. Plain Rust with no UI or browser types, so `cargo test -p
//! hasseflow-app` tests it natively; the wasm shell wraps it in `use_reducer`.
//!
//! The clock is injected ([`AppState::new`] takes a `fn() -> f64` in milliseconds) so the time
//! of each analysis can be shown without this module reading a clock itself.
//!
//! The state is grouped by view ([`EditorState`], [`DesignerState`], [`FlowState`],
//! [`ModelsState`]) beside what is app-wide (message, view, side view, action count). [`Action`]
//! is a tree of the same shape: [`AppState::apply`] hands each group to the module that owns and
//! reduces it, each matching its own enum exhaustively: `tools` ([`EditAction`]: strokes, edits,
//! undo, over `document`'s history and derived data), `import` ([`ImportAction`]: presets, files,
//! links, autosave; exports), `designer` ([`DesignerAction`]), `flow` ([`FlowAction`]), `models`
//! ([`ModelsAction`]) and `view` ([`ViewAction`]: layer, hover, overlays, messages, views).

use std::collections::BTreeMap;
use std::rc::Rc;

use hasseflow_core::interop::BlockStats;
use hasseflow_core::presets::build_preset;
use hasseflow_core::{BitMatrix, SparsifyOptions};

mod designer;
mod document;
mod flow;
mod gesture;
mod grid_picture;
mod import;
mod job;
mod layer_kinds;
mod models;
mod order_picture;
mod tools;
mod view;
pub use designer::{
    Design, DesignerAction, DesignerState, FamilySpec, LinkError, MAX_DESIGN_N, MAX_SAVED_FAMILY_BYTES,
    MAX_TASKS_DRAWN, PendingDesign, SavedFamilyError,
};
use document::stats_of;
pub use document::{Derived, Document, History, UNDO_LIMIT, default_block_size};
pub use flow::{
    AdapterSeen, BackendChoice, BackendPlan, FlowAction, FlowKey, FlowMap, FlowOutcome, FlowRequest, FlowRun,
    FlowSettings, FlowSource, FlowState, FlowStatus, LayerPicture, MAX_FLOW_N, SideView, THRESHOLDS, ThresholdError,
    check_threshold, plan_backend,
};
pub use gesture::{Gesture, KeyStep, Pointer, Reaction, StrokeStep, grid_key};
pub use grid_picture::{
    BlockOverlay, CANVAS_PX, ClassOverlay, GridCells, GridFrame, GridInput, GridView, HoverOverlay, RULER, Rect,
    RulerLabel, Segment, Shade, Strokes,
};
pub use import::{ImportAction, PasteRefusal, PendingRead, REFUSAL_WIDTH};
pub use job::KeyedRun;
pub use layer_kinds::{
    KindEntry, LayerLegend, LayerRole, clipped, describe, gallery_options, kind_family, pattern_line,
};
pub use models::{
    ContextError, DEFAULT_MODEL_N, HEAT_CELLS, HeatPicture, HeatView, MAX_MODEL_N, ModelChoice, ModelKey, ModelOutcome,
    ModelRequest, ModelStatus, ModelsAction, ModelsState, PendingModel, run_error,
};
pub use order_picture::{ORDER_H, ORDER_W, OrderEdge, OrderNode, OrderPicture, ViewBox};
pub use tools::{EditAction, Stroke, Tool};
pub use view::{View, ViewAction};

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

/// The editor's part of the store: the document and what the editor shows of it.
#[derive(Clone, Debug)]
pub struct EditorState {
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
    /// Where the latest pasted text was refused (its line and column), for the paste box; cleared
    /// by a successful import and replaced by the next paste.
    pub paste_refusal: Option<Rc<PasteRefusal>>,
    /// A `mask_mod` import waiting for the lazily loaded reader (the app's shell runs it and
    /// answers with [`ImportAction::Answered`]); `None` when the reader is linked in.
    pub reading: Option<Rc<PendingRead>>,
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
}

/// The whole app state: one part per view, and what is app-wide.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The editor: document, history, tools, layer, hover, overlays.
    pub editor: EditorState,
    /// The designer: the latest derivation, its hover, the autosaved family.
    pub designer: DesignerState,
    /// The Flow view's settings and latest run.
    pub flow: FlowState,
    /// The Models view: model, context, documents, latest run.
    pub models: ModelsState,
    /// The latest message.
    pub message: Option<Message>,
    /// Editor, designer or Models.
    pub view: View,
    /// The order view or the Flow view beside the grid.
    pub side: SideView,
    /// Actions applied so far: the state is unchanged while this is (the shell's page components
    /// compare it instead of the whole state).
    pub actions: u64,
    /// Whether the `mask_mod` reader is linked in (`interop::READER_LINKED`): the CLI's and the
    /// tests' core. Without it (the web app's first download) a `mask_mod` import waits in
    /// [`EditorState::reading`] for the lazily loaded reader.
    pub reader_linked: bool,
    clock: fn() -> f64,
}

/// Everything that can happen, grouped by the part of the store that reduces it. Closed: each
/// group's reducer matches its own enum exhaustively.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Strokes, tools, whole-mask edits and undo (`tools`).
    Edit(EditAction),
    /// Presets, files, pasted text, share links and the autosave (`import`).
    Import(ImportAction),
    /// The designer's derivations (`designer`).
    Designer(DesignerAction),
    /// The Flow view's settings and runs (`flow`).
    Flow(FlowAction),
    /// The Models view's model, context, heatmap and runs (`models`).
    Models(ModelsAction),
    /// What is shown: views, layer, hover, messages, overlays (`view`).
    View(ViewAction),
}

macro_rules! action_from {
    ($($group:ident($sub:ty)),* $(,)?) => {
        $(impl From<$sub> for Action {
            fn from(action: $sub) -> Self {
                Action::$group(action)
            }
        })*
    };
}
action_from!(
    Edit(EditAction),
    Import(ImportAction),
    Designer(DesignerAction),
    Flow(FlowAction),
    Models(ModelsAction),
    View(ViewAction),
);

impl AppState {
    /// A state holding `doc`, with `clock` timing analyses.
    pub fn new(doc: Document, clock: fn() -> f64) -> Self {
        let derived = Rc::new(Derived::compute(&doc.mask, clock));
        let blocks = stats_of(&doc.mask, default_block_size(doc.mask.n()));
        AppState {
            editor: EditorState {
                doc,
                revision: 0,
                derived,
                history: Rc::new(History::default()),
                tool: Tool::Draw,
                stroke: None,
                layer: 1,
                playing: false,
                paste_refusal: None,
                reading: None,
                hover_cell: None,
                hover_class: None,
                order_view: OrderView::Hasse,
                sparsify: SparsifyOptions::default(),
                block_size: None,
                show_blocks: false,
                blocks,
            },
            designer: DesignerState { linked: hasseflow_core::derive::wire::LINKED, ..DesignerState::default() },
            flow: FlowState::default(),
            models: ModelsState::default(),
            message: None,
            view: View::Editor,
            side: SideView::Order,
            actions: 0,
            reader_linked: hasseflow_core::interop::READER_LINKED,
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
        self.editor.doc.mask.n()
    }

    /// Largest layer the control offers: `L* + 1` (one past convergence shows nothing new), and
    /// in the Flow view at least the model's last layer.
    pub fn max_layer(&self) -> usize {
        let theory = self.editor.derived.analysis.depth() + 1;
        if self.side == SideView::Flow { theory.max(self.flow.settings.config.layers) } else { theory }
    }

    /// Whether the shown layer has reached the limit.
    pub fn converged(&self) -> bool {
        self.editor.layer >= self.editor.derived.analysis.depth()
    }

    /// Classes on some path from the hovered cell's key class up to its query class (the
    /// interval `[class(k), class(q)]`), for lighting up the diagram. Empty when `q` never sees `k`.
    pub fn hovered_path(&self) -> Vec<bool> {
        let a = &self.editor.derived.analysis;
        let mut lit = vec![false; a.classes().len()];
        if let Some((q, k)) = self.editor.hover_cell
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
            Action::Edit(a) => self.apply_edit(a),
            Action::Import(a) => self.apply_import(a),
            Action::Designer(a) => self.apply_designer(a),
            Action::Flow(a) => self.apply_flow(a),
            Action::Models(a) => self.apply_model(a),
            Action::View(a) => self.apply_view(a),
        }
    }
}

// Each group's reducer tests, natively (`cargo test -p hasseflow-app`).
#[cfg(test)]
mod designer_tests;
#[cfg(test)]
mod flow_tests;
#[cfg(test)]
mod import_tests;
#[cfg(test)]
mod models_tests;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tools_tests;
#[cfg(test)]
mod view_tests;
