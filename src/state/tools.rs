//! Editing the mask: the [`Tool`]s, pointer strokes (painted live over the document before the
//! stroke, one undo step when they end) and the whole-mask edits (resize, transpose, invert,
//! densify, sparsify, clear).

use std::rc::Rc;

use hasseflow_core::{BitMatrix, densify, sparsify};

use super::{Action, AppState, Document, MAX_EDIT_N};

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

impl AppState {
    /// The strokes, tools and whole-mask edits.
    pub(super) fn apply_edit(&mut self, action: Action) {
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
                    self.record(stroke.before);
                }
            }
            Action::StrokeCancel => {
                if let Some(stroke) = self.stroke.take() {
                    self.set_live(stroke.before);
                }
                self.settle();
            }
            Action::SetTool(t) => self.tool = t,
            Action::Undo => self.undo(),
            Action::Redo => self.redo(),
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
            _ => {}
        }
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
}
