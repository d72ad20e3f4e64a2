//! Reducer tests of what is shown ([`ViewAction`]): layers and their animation, the block size,
//! the action count.

use super::test_support::*;
use super::*;

#[test]
fn sliding_window_steps_to_convergence() {
    let mut s = state(BitMatrix::zeros(2));
    let params = BTreeMap::from([("w".to_string(), "2".to_string())]);
    s.apply(Action::Import(ImportAction::LoadPreset { name: "sliding-window".into(), n: 8, params }));
    assert_eq!(s.editor.derived.analysis.depth(), 7);
    assert_eq!(s.editor.layer, 1);
    assert!(!s.converged());
    for _ in 0..20 {
        s.apply(Action::View(ViewAction::StepLayer(1)));
    }
    assert_eq!(s.editor.layer, 8, "the control stops at L* + 1");
    assert!(s.converged());
    s.apply(Action::View(ViewAction::StepLayer(-1)));
    assert_eq!(s.editor.layer, 7);
    s.apply(Action::View(ViewAction::SetLayer(0)));
    s.apply(Action::View(ViewAction::TogglePlay));
    assert!(s.editor.playing);
    for _ in 0..20 {
        s.apply(Action::View(ViewAction::Tick));
    }
    assert_eq!(s.editor.layer, 8);
    assert!(!s.editor.playing, "the animation stops at the end");
    // Editing to a shallower mask clamps the layer.
    s.apply(Action::Edit(EditAction::Densify));
    assert_eq!(s.editor.derived.analysis.depth(), 1);
    assert_eq!(s.editor.layer, 2);
}

#[test]
fn block_size_defaults_by_n_and_follows_the_user() {
    assert_eq!((default_block_size(4), default_block_size(64), default_block_size(4096)), (1, 8, 128));
    let mut s = state(BitMatrix::from_fn(16, |q, k| k <= q));
    assert_eq!(s.effective_block_size(), 2);
    s.apply(Action::View(ViewAction::SetBlockSize(8)));
    assert_eq!(s.effective_block_size(), 8);
    assert_eq!((s.editor.blocks.total.full, s.editor.blocks.total.partial, s.editor.blocks.total.empty), (1, 2, 1));
    s.apply(Action::View(ViewAction::SetBlockSize(1000)));
    assert_eq!(s.effective_block_size(), 16);
    s.apply(Action::View(ViewAction::SetShowBlocks(true)));
    assert!(s.editor.show_blocks);
    s.apply(Action::Edit(EditAction::Invert));
    assert_eq!(s.editor.blocks.block_size, 16);
    assert!(s.editor.derived.flash.starts_with("no"), "{}", s.editor.derived.flash);
}

#[test]
fn every_action_is_counted_so_the_shell_can_tell_a_changed_state() {
    let mut s = state(BitMatrix::zeros(3));
    assert_eq!(s.actions, 0);
    s.apply(Action::View(ViewAction::HoverCell(Some((0, 0)))));
    // Even one that changes nothing (no undo step yet) counts: the count only tells "maybe new".
    s.apply(Action::Edit(EditAction::Undo));
    assert_eq!(s.actions, 2);
}

#[test]
fn a_message_stays_in_its_own_view() {
    let mut s = state(BitMatrix::zeros(2));
    s.apply(Action::View(ViewAction::SetView(View::Designer)));
    let spec = FamilySpec::Builtin(hasseflow_core::derive::BuiltinFamily::Butterfly(
        hasseflow_core::derive::ButterflyOptions::new(4),
    ));
    s.apply(Action::Designer(DesignerAction::Derive(spec)));
    let text = s.message.as_ref().map(|m| m.text.clone()).unwrap_or_default();
    assert!(text.starts_with("derived butterfly n=4: 16 nodes -> 10"), "{text}");
    // The same view again: the message stays.
    s.apply(Action::View(ViewAction::SetView(View::Designer)));
    assert!(s.message.is_some());
    // The Models view (the case) and the editor never show the designer's message.
    s.apply(Action::View(ViewAction::SetView(View::Models)));
    assert_eq!(s.message, None);
    s.apply(Action::View(ViewAction::Notify(Level::Error, "copy failed".into())));
    s.apply(Action::View(ViewAction::SetView(View::Editor)));
    assert_eq!(s.message, None);
    // An action that moves to another view itself keeps the message it wrote there.
    s.apply(Action::View(ViewAction::SetView(View::Designer)));
    s.apply(Action::Designer(DesignerAction::OpenDerived));
    assert_eq!(s.view, View::Editor);
    let text = s.message.as_ref().map(|m| m.text.clone()).unwrap_or_default();
    assert!(text.contains("derived mask of butterfly n=4"), "{text}");
}
