//! The edited document and its history: [`Document`], what is derived from it once per revision
//! ([`Derived`], the block statistics), and the undo and redo stacks. Every change of the document
//! goes through [`AppState::commit`] (one undo step) or `set_live` (strokes, undo, redo), which
//! bump the revision and refresh the derived data.

use std::rc::Rc;

use hasseflow_core::format::{MaskFile, Provenance};
use hasseflow_core::interop::{self, BlockStats};
use hasseflow_core::{Analysis, BitMatrix, FirstReach, LayerStack, StackMode};

use super::AppState;

/// Undo steps kept.
pub const UNDO_LIMIT: usize = 200;

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

/// Undo and redo stacks (shared, so cloning the state for a hover is cheap).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    undo: Vec<Document>,
    redo: Vec<Document>,
}

impl History {
    /// Records `before` as the latest undo step (the oldest goes past [`UNDO_LIMIT`]); a new
    /// change forgets what was undone.
    fn push(&mut self, before: Document) {
        self.undo.push(before);
        if self.undo.len() > UNDO_LIMIT {
            self.undo.remove(0);
        }
        self.redo.clear();
    }
}

/// The block size used until the user picks one: FlexAttention's 128, smaller for small masks
/// so the tiles say something (`min(128, max(1, n / 8))`).
pub fn default_block_size(n: usize) -> usize {
    (n / 8).clamp(1, 128)
}

pub(super) fn stats_of(mask: &BitMatrix, block_size: usize) -> Rc<BlockStats> {
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

impl AppState {
    /// Whether there is something to undo / redo.
    pub fn can_undo(&self) -> bool {
        !self.editor.history.undo.is_empty()
    }
    /// See [`AppState::can_undo`].
    pub fn can_redo(&self) -> bool {
        !self.editor.history.redo.is_empty()
    }

    /// The block size in use: the user's choice (at most `n`) or the default for `n`.
    pub fn effective_block_size(&self) -> usize {
        self.editor.block_size.unwrap_or_else(|| default_block_size(self.n())).clamp(1, self.n().max(1))
    }

    /// Replaces the document as one undo step (no step when nothing changed).
    pub(super) fn commit(&mut self, doc: Document) {
        if doc == self.editor.doc {
            return;
        }
        let old = std::mem::replace(&mut self.editor.doc, doc);
        Rc::make_mut(&mut self.editor.history).push(old);
        self.refresh();
    }

    /// Records the document before a finished stroke as one undo step.
    pub(super) fn record(&mut self, before: Document) {
        Rc::make_mut(&mut self.editor.history).push(before);
    }

    /// Replaces the document by the result of `f` on the mask, as one undo step.
    pub(super) fn edit(&mut self, f: impl FnOnce(&BitMatrix) -> BitMatrix) {
        let mask = f(&self.editor.doc.mask);
        self.commit(self.editor.doc.edited(mask));
    }

    /// Goes back one undo step (nothing when there is none).
    pub(super) fn undo(&mut self) {
        self.editor.stroke = None;
        let h = Rc::make_mut(&mut self.editor.history);
        if let Some(prev) = h.undo.pop() {
            h.redo.push(self.editor.doc.clone());
            self.set_live(prev);
        }
    }

    /// Goes forward one undone step (nothing when there is none).
    pub(super) fn redo(&mut self) {
        self.editor.stroke = None;
        let h = Rc::make_mut(&mut self.editor.history);
        if let Some(next) = h.redo.pop() {
            h.undo.push(self.editor.doc.clone());
            self.set_live(next);
        }
    }

    /// Replaces the document without touching history (during a stroke, undo, redo).
    pub(super) fn set_live(&mut self, doc: Document) {
        if doc != self.editor.doc {
            self.editor.doc = doc;
            self.refresh();
        }
    }

    fn refresh(&mut self) {
        self.editor.revision += 1;
        if self.editor.stroke.is_some() {
            // Mid-stroke: only what the grid and the order view draw.
            self.editor.derived =
                Rc::new(Derived::during_stroke(&self.editor.doc.mask, self.clock, &self.editor.derived));
        } else {
            self.editor.derived = Rc::new(Derived::compute(&self.editor.doc.mask, self.clock));
            self.editor.blocks = stats_of(&self.editor.doc.mask, self.effective_block_size());
        }
        self.editor.layer = self.editor.layer.min(self.max_layer());
        if self.editor.hover_class.is_some_and(|c| c >= self.editor.derived.analysis.classes().len()) {
            self.editor.hover_class = None;
        }
        if self.editor.hover_cell.is_some_and(|(q, k)| q >= self.n() || k >= self.n()) {
            self.editor.hover_cell = None;
        }
    }

    /// After a stroke: the width, kernel verdicts and block statistics of the mask it left.
    pub(super) fn settle(&mut self) {
        if self.editor.derived.pending {
            // The components may still hold this Rc: settle a copy (once per stroke).
            self.editor.derived = Rc::new(Derived::clone(&self.editor.derived).settled(&self.editor.doc.mask));
            self.editor.blocks = stats_of(&self.editor.doc.mask, self.effective_block_size());
        }
    }

    /// Sets the block size of the overlay, statistics and exports (clamped to `1..=n`).
    pub(super) fn set_block_size(&mut self, b: usize) {
        self.editor.block_size = Some(b.clamp(1, self.n().max(1)));
        self.editor.blocks = stats_of(&self.editor.doc.mask, self.effective_block_size());
    }
}
