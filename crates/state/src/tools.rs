//! Editing the mask: the [`Tool`]s, pointer strokes (painted live over the document before the
//! stroke, one undo step when they end) and the whole-mask edits (resize, transpose, invert,
//! densify, sparsify, clear).

use std::rc::Rc;

use hasseflow_core::{BitMatrix, SparsifyOptions, densify, sparsify};

use super::{AppState, Document, MAX_EDIT_N};

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

/// The editor's edits: strokes, tools, undo and whole-mask edits (reduced here).
#[derive(Clone, Debug, PartialEq)]
pub enum EditAction {
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
}

impl AppState {
    /// The strokes, tools and whole-mask edits.
    pub(super) fn apply_edit(&mut self, action: EditAction) {
        match action {
            EditAction::StrokeStart(q, k) => {
                let n = self.n();
                if q >= n || k >= n {
                    return;
                }
                let m = &self.editor.doc.mask;
                let value = match self.editor.tool {
                    Tool::Draw => true,
                    Tool::Erase => false,
                    Tool::Toggle | Tool::Rect | Tool::Band => !m.get(q, k),
                    Tool::Row => m.row_count(q) < n,
                    Tool::Column => (0..n).any(|r| !m.get(r, k)),
                };
                self.editor.stroke = Some(Stroke { anchor: (q, k), value, before: self.editor.doc.clone() });
                self.paint(q, k);
            }
            EditAction::StrokeMove(q, k) => self.paint(q, k),
            EditAction::StrokeEnd => {
                self.settle();
                if let Some(stroke) = self.editor.stroke.take()
                    && stroke.before != self.editor.doc
                {
                    self.record(stroke.before);
                }
            }
            EditAction::StrokeCancel => {
                if let Some(stroke) = self.editor.stroke.take() {
                    self.set_live(stroke.before);
                }
                self.settle();
            }
            EditAction::SetTool(t) => self.editor.tool = t,
            EditAction::Undo => self.undo(),
            EditAction::Redo => self.redo(),
            EditAction::Resize(m) => {
                if m == 0 || m > MAX_EDIT_N {
                    self.error(format!("size must be between 1 and {MAX_EDIT_N}; got {m}"));
                    return;
                }
                let labels = self.editor.doc.labels.as_ref().map(|l| {
                    Rc::new((0..m).map(|i| l.get(i).cloned().unwrap_or_else(|| i.to_string())).collect::<Vec<_>>())
                });
                let old_n = self.n();
                let dropped = self.editor.doc.stack.is_some() && m != old_n;
                let stack = if dropped { None } else { self.editor.doc.stack.clone() };
                self.commit(Document {
                    mask: Rc::new(self.editor.doc.mask.resized(m)),
                    labels,
                    provenance: None,
                    stack,
                });
                if dropped {
                    self.info(format!(
                        "the layer stack has {old_n} x {old_n} masks, so resizing to {m} dropped it (undo brings it back)."
                    ));
                }
            }
            EditAction::Transpose => self.edit(|m| m.transpose()),
            EditAction::Invert => self.edit(|m| m.not()),
            EditAction::Densify => self.edit(densify),
            EditAction::Sparsify => {
                let options = self.editor.sparsify;
                self.edit(|m| sparsify(m, options));
            }
            EditAction::SetSparsify(o) => self.editor.sparsify = o,
            EditAction::Clear => self.edit(|m| BitMatrix::zeros(m.n())),
        }
    }

    /// Applies the current stroke from its anchor to `(q, k)` on top of the pre-stroke document.
    fn paint(&mut self, q: usize, k: usize) {
        let Some(stroke) = self.editor.stroke.clone() else { return };
        let n = self.n();
        if q >= n || k >= n {
            return;
        }
        let v = stroke.value;
        let (aq, ak) = stroke.anchor;
        let shape = |m: &mut BitMatrix| match self.editor.tool {
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
        let mut m = match self.editor.tool {
            Tool::Draw | Tool::Erase | Tool::Toggle => (*self.editor.doc.mask).clone(),
            _ => (*stroke.before.mask).clone(),
        };
        shape(&mut m);
        if m != *self.editor.doc.mask {
            let doc = self.editor.doc.edited(m);
            self.set_live(doc);
        }
    }
}
