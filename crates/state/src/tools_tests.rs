//! Reducer tests of the editor's edits ([`EditAction`]): strokes, tools, undo.

use super::test_support::*;
use super::*;

#[test]
fn painting_a_causal_mask_gives_depth_one() {
    let mut s = state(BitMatrix::zeros(4));
    assert_eq!(s.editor.derived.analysis.depth(), 0);
    paint(&mut s, &[(1, 0), (2, 0), (2, 1), (3, 0), (3, 1), (3, 2)]);
    assert_eq!(rows(&s), ["....", "1...", "11..", "111."]);
    assert_eq!(s.editor.derived.analysis.depth(), 1);
    assert!(s.editor.derived.analysis.is_dense());
    assert_eq!(s.editor.derived.analysis.hasse_edges(), &[(0, 1), (1, 2), (2, 3)]);
    // One stroke is one undo step.
    s.apply(Action::Edit(EditAction::Undo));
    assert_eq!(s.editor.doc.mask.count_ones(), 0);
    s.apply(Action::Edit(EditAction::Redo));
    assert_eq!(s.editor.doc.mask.count_ones(), 6);
}

#[test]
fn undo_redo_cover_every_kind_of_change_and_redo_clears_on_edit() {
    let mut s = state(BitMatrix::zeros(3));
    let r0 = rows(&s);
    paint(&mut s, &[(0, 1)]);
    let r1 = rows(&s);
    s.apply(Action::Edit(EditAction::Transpose));
    let r2 = rows(&s);
    s.apply(Action::Edit(EditAction::Resize(5)));
    assert_eq!(s.n(), 5);
    s.apply(Action::Edit(EditAction::Invert));
    s.apply(Action::Edit(EditAction::Undo));
    s.apply(Action::Edit(EditAction::Undo));
    assert_eq!(rows(&s), r2);
    s.apply(Action::Edit(EditAction::Undo));
    assert_eq!(rows(&s), r1);
    s.apply(Action::Edit(EditAction::Undo));
    assert_eq!(rows(&s), r0);
    assert!(!s.can_undo());
    s.apply(Action::Edit(EditAction::Undo)); // nothing left: no change
    assert_eq!(rows(&s), r0);
    s.apply(Action::Edit(EditAction::Redo));
    assert_eq!(rows(&s), r1);
    paint(&mut s, &[(2, 2)]);
    assert!(!s.can_redo(), "a new edit drops the redo stack");
}

#[test]
fn tools_erase_toggle_rect_row_column_band() {
    let mut s = state(BitMatrix::zeros(4));
    s.apply(Action::Edit(EditAction::SetTool(Tool::Rect)));
    paint(&mut s, &[(1, 1), (2, 3), (3, 2)]);
    assert_eq!(rows(&s), ["....", ".11.", ".11.", ".11."]);
    s.apply(Action::Edit(EditAction::SetTool(Tool::Erase)));
    paint(&mut s, &[(1, 1), (1, 2)]);
    assert_eq!(rows(&s), ["....", "....", ".11.", ".11."]);
    s.apply(Action::Edit(EditAction::SetTool(Tool::Toggle)));
    paint(&mut s, &[(2, 1), (0, 0)]);
    assert_eq!(rows(&s), ["....", "....", "..1.", ".11."], "toggle writes the opposite of the first cell");
    s.apply(Action::Edit(EditAction::SetTool(Tool::Row)));
    paint(&mut s, &[(0, 2)]);
    assert_eq!(rows(&s)[0], "1111");
    paint(&mut s, &[(0, 1)]);
    assert_eq!(rows(&s)[0], "....", "a full row is cleared");
    s.apply(Action::Edit(EditAction::SetTool(Tool::Column)));
    paint(&mut s, &[(0, 0)]);
    assert_eq!(rows(&s), ["1...", "1...", "1.1.", "111."]);
    s.apply(Action::Edit(EditAction::Clear));
    s.apply(Action::Edit(EditAction::SetTool(Tool::Band)));
    paint(&mut s, &[(0, 0), (1, 0)]);
    assert_eq!(rows(&s), ["1...", "11..", ".11.", "..11"]);
    assert_eq!(s.editor.derived.analysis.depth(), 3);
    s.apply(Action::Edit(EditAction::SetTool(Tool::Draw)));
    paint(&mut s, &[(9, 9)]); // outside: ignored
    assert_eq!(s.editor.doc.mask.count_ones(), 7);
}

#[test]
fn a_stroke_defers_width_verdicts_and_blocks_to_its_end() {
    let mut s = state(BitMatrix::zeros(6));
    let (width, flash, blocks) = (s.editor.derived.width, s.editor.derived.flash.clone(), s.editor.blocks.clone());
    assert!(!s.editor.derived.pending);
    s.apply(Action::Edit(EditAction::StrokeStart(1, 0)));
    s.apply(Action::Edit(EditAction::StrokeMove(2, 0)));
    // Mid-stroke: the analysis is the new mask's, the extras still the old mask's.
    assert!(s.editor.derived.pending);
    assert_eq!(s.editor.derived.analysis.n(), 6);
    assert!(s.editor.derived.analysis.closure().get(2, 0));
    assert_eq!((s.editor.derived.width, &s.editor.derived.flash), (width, &flash));
    assert!(Rc::ptr_eq(&s.editor.blocks, &blocks));
    s.apply(Action::Edit(EditAction::StrokeEnd));
    let fresh = Derived::compute(&s.editor.doc.mask, clock);
    assert!(!s.editor.derived.pending);
    assert_eq!(
        (s.editor.derived.width, &s.editor.derived.flash, &s.editor.derived.flashmask),
        (fresh.width, &fresh.flash, &fresh.flashmask)
    );
    assert_eq!(*s.editor.blocks, *stats_of(&s.editor.doc.mask, s.effective_block_size()));
    assert_ne!(s.editor.derived.width, width);
    // A cancelled stroke settles on the mask before it.
    s.apply(Action::Edit(EditAction::StrokeStart(3, 3)));
    s.apply(Action::Edit(EditAction::StrokeMove(3, 1)));
    s.apply(Action::Edit(EditAction::StrokeCancel));
    assert!(!s.editor.derived.pending);
    assert_eq!(s.editor.derived.width, fresh.width);
}

#[test]
fn a_cancelled_stroke_leaves_no_trace() {
    let mut s = state(BitMatrix::from_fn(4, |q, k| k <= q));
    let (before, rev) = (s.editor.doc.clone(), s.editor.revision);
    s.apply(Action::Edit(EditAction::StrokeStart(0, 3)));
    s.apply(Action::Edit(EditAction::StrokeMove(1, 3)));
    assert_eq!(s.editor.doc.mask.count_ones(), 12, "painted while the finger moved");
    s.apply(Action::Edit(EditAction::StrokeCancel));
    assert_eq!(s.editor.doc, before);
    assert!(s.editor.stroke.is_none());
    assert!(!s.can_undo(), "no undo step for a stroke that never happened");
    assert!(s.editor.revision > rev, "the views follow the restored mask");
    s.apply(Action::Edit(EditAction::StrokeCancel));
    assert_eq!(s.editor.doc, before, "cancelling without a stroke does nothing");
}
