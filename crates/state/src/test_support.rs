//! What the reducer tests share: a fixed clock, a state over a mask, its rows, a stroke.

use super::*;

pub(super) fn clock() -> f64 {
    0.0
}

pub(super) fn state(mask: BitMatrix) -> AppState {
    AppState::new(Document::new(mask), clock)
}

pub(super) fn rows(s: &AppState) -> Vec<String> {
    s.editor.doc.mask.to_row_strings()
}

pub(super) fn paint(s: &mut AppState, cells: &[(usize, usize)]) {
    s.apply(Action::Edit(EditAction::StrokeStart(cells[0].0, cells[0].1)));
    for &(q, k) in &cells[1..] {
        s.apply(Action::Edit(EditAction::StrokeMove(q, k)));
    }
    s.apply(Action::Edit(EditAction::StrokeEnd));
}
