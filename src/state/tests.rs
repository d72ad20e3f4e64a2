//! Reducer tests: every action through `AppState::apply`, natively.

use hasseflow_core::format::{MaskFile, parse_mask_file};
use hasseflow_core::interop::{self, ExportKind};

use super::*;
use crate::share;
use hasseflow_core::derive::{
    Aggregate, AutoregressiveOptions, BlockOptions, BuiltinFamily, ButterflyOptions, MaeOptions,
};
use hasseflow_core::presets::{Inner, TwoStreamOrder};

fn clock() -> f64 {
    0.0
}

fn state(mask: BitMatrix) -> AppState {
    AppState::new(Document::new(mask), clock)
}

fn rows(s: &AppState) -> Vec<String> {
    s.editor.doc.mask.to_row_strings()
}

fn paint(s: &mut AppState, cells: &[(usize, usize)]) {
    s.apply(Action::Edit(EditAction::StrokeStart(cells[0].0, cells[0].1)));
    for &(q, k) in &cells[1..] {
        s.apply(Action::Edit(EditAction::StrokeMove(q, k)));
    }
    s.apply(Action::Edit(EditAction::StrokeEnd));
}

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
fn every_catalog_preset_loads_with_its_defaults() {
    for spec in hasseflow_core::presets::CATALOG {
        let mut s = state(BitMatrix::zeros(2));
        s.apply(Action::Import(ImportAction::LoadPreset { name: spec.name.into(), n: 12, params: BTreeMap::new() }));
        assert_eq!(s.message.as_ref().map(|m| m.level), Some(Level::Info), "{}: {:?}", spec.name, s.message);
        assert_eq!(s.editor.doc.provenance.as_ref().map(|p| p.preset.as_str()), Some(spec.name));
    }
    let mut s = state(BitMatrix::zeros(2));
    s.apply(Action::Import(ImportAction::LoadPreset { name: "butterfly".into(), n: 4, params: BTreeMap::new() }));
    assert_eq!(s.n(), 12);
    assert_eq!(s.editor.derived.analysis.hasse_edges().len(), 12);
    let labels =
        |s: &AppState| s.editor.doc.labels.as_ref().map(|l| l.iter().map(String::as_str).collect::<Vec<_>>().join(" "));
    assert_eq!(labels(&s).as_deref(), Some("F_0 F_1 F_2 F_3 B_0 B_1 B_2 B_3 P_0 P_1 P_2 P_3"), "positions are named");
    let params = BTreeMap::from([("s".to_string(), "2".to_string())]);
    s.apply(Action::Import(ImportAction::LoadPreset { name: "block-two-stream".into(), n: 6, params }));
    assert_eq!(s.n(), 12);
    assert_eq!(s.editor.derived.analysis.classes().len(), 6);
    assert_eq!(labels(&s).as_deref(), Some("w_0 w_1 w_2 w_3 w_4 w_5 m@0 m@1 m@2 m@3 m@4 m@5"));
    s.apply(Action::Import(ImportAction::LoadPreset { name: "causal".into(), n: 5, params: BTreeMap::new() }));
    assert_eq!(s.editor.doc.labels, None, "one token per position: no labels");
    s.apply(Action::Edit(EditAction::Undo));
    assert_eq!(s.editor.doc.labels.as_ref().map(|l| l.len()), Some(12), "undo brings the labels back");
}

#[test]
fn bad_presets_files_and_links_leave_the_mask_unchanged() {
    let mut s = state(BitMatrix::from_fn(3, |q, k| k <= q));
    let before = s.editor.doc.clone();
    let rev = s.editor.revision;
    let bad = BTreeMap::from([("w".to_string(), "zero".to_string())]);
    s.apply(Action::Import(ImportAction::LoadPreset { name: "sliding-window".into(), n: 8, params: bad }));
    s.apply(Action::Import(ImportAction::LoadPreset { name: "causal".into(), n: 600, params: BTreeMap::new() }));
    for bytes in [
        b"{ not json".to_vec(),
        br#"{"format":"hasseflow-mask","version":2,"n":1,"rows":["1"]}"#.to_vec(),
        br#"{"format":"other","version":1}"#.to_vec(),
        vec![0xff, 0xfe],
        Vec::new(),
        format!(r#"{{"format":"hasseflow-mask","version":1,"n":600,"packed":"{}"}}"#, "A".repeat(60000)).into_bytes(),
    ] {
        s.apply(Action::Import(ImportAction::ImportFile { name: "bad.json".into(), bytes }));
        let m = s.message.clone().expect("a message");
        assert_eq!(m.level, Level::Error, "{}", m.text);
        assert!(m.text.contains("Nothing was changed"), "{}", m.text);
    }
    s.apply(Action::Import(ImportAction::LoadShared("n=4&m=Mf".into())));
    assert!(s.message.as_ref().is_some_and(|m| m.text.contains("share link is damaged")));
    s.apply(Action::Import(ImportAction::Restore("garbage".into())));
    assert!(s.message.as_ref().is_some_and(|m| m.level == Level::Error));
    assert_eq!(s.editor.doc, before);
    assert_eq!(s.editor.revision, rev);
    assert!(!s.can_undo());
}

#[test]
fn import_keeps_labels_as_plain_text_and_share_round_trips() {
    let mut s = state(BitMatrix::zeros(2));
    let json = br#"{"format":"hasseflow-mask","version":1,"n":2,"labels":["<img src=x onerror=alert(1)>","b"],"rows":["1.","11"]}"#;
    s.apply(Action::Import(ImportAction::ImportFile { name: "l.json".into(), bytes: json.to_vec() }));
    assert_eq!(s.editor.doc.labels.as_deref().map(|l| l[0].as_str()), Some("<img src=x onerror=alert(1)>"));
    let exported = hasseflow_core::format::write_json(&s.editor.doc.to_file(), hasseflow_core::format::Encoding::Auto);
    assert_eq!(parse_mask_file(exported.as_bytes()).expect("re-import").mask, *s.editor.doc.mask);
    let link = s.share_fragment();
    let mut t = state(BitMatrix::zeros(5));
    t.apply(Action::Import(ImportAction::LoadShared(link.clone())));
    assert_eq!(t.editor.doc.mask, s.editor.doc.mask);
    assert_eq!(t.editor.doc.labels, s.editor.doc.labels, "the link carries the labels, as text");
    // A link whose labels were tampered with changes nothing.
    let before = t.editor.doc.clone();
    t.apply(Action::Import(ImportAction::LoadShared(format!(
        "{}&l=W10",
        link.split("&l=").next().unwrap_or_default()
    ))));
    assert!(t.message.as_ref().is_some_and(|m| m.text.contains("expected 2 labels")), "{:?}", t.message);
    assert_eq!(t.editor.doc, before);
    // Resizing keeps labels in step with positions.
    s.apply(Action::Edit(EditAction::Resize(3)));
    assert_eq!(s.editor.doc.labels.as_ref().map(|l| l.len()), Some(3));
}

#[test]
fn restore_does_not_add_an_undo_step_and_hover_path_follows_the_order() {
    let mut s = state(BitMatrix::zeros(2));
    let file = hasseflow_core::format::write_json(
        &MaskFile::new(BitMatrix::from_fn(4, |q, k| k <= q)),
        hasseflow_core::format::Encoding::Auto,
    );
    s.apply(Action::Import(ImportAction::Restore(file)));
    assert_eq!(s.n(), 4);
    assert!(!s.can_undo());
    s.apply(Action::View(ViewAction::HoverCell(Some((3, 1)))));
    assert_eq!(s.hovered_path(), vec![false, true, true, true]);
    s.apply(Action::View(ViewAction::HoverCell(Some((1, 3)))));
    assert_eq!(s.hovered_path(), vec![false; 4], "1 never sees 3");
    s.apply(Action::Edit(EditAction::Resize(2)));
    assert_eq!(s.editor.hover_cell, None, "hover outside the new size is dropped");
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
fn npy_import_loads_and_bad_npy_changes_nothing() {
    let causal = BitMatrix::from_fn(5, |q, k| k <= q);
    let mut s = state(BitMatrix::zeros(3));
    s.apply(Action::Import(ImportAction::ImportFile { name: "m.npy".into(), bytes: interop::write_npy(&causal) }));
    assert_eq!(*s.editor.doc.mask, causal);
    assert!(s.can_undo());
    let (rev, doc) = (s.editor.revision, s.editor.doc.clone());
    let mut bad = interop::write_npy(&causal);
    bad.truncate(bad.len() - 3);
    s.apply(Action::Import(ImportAction::ImportFile { name: "bad.npy".into(), bytes: bad }));
    assert_eq!((s.editor.revision, &s.editor.doc), (rev, &doc));
    let m = s.message.clone().unwrap();
    assert_eq!(m.level, Level::Error);
    assert!(m.text.contains("bad.npy") && m.text.contains("Nothing was changed"), "{}", m.text);
    s.apply(Action::Edit(EditAction::Undo));
    assert_eq!(s.n(), 3);
}

fn paste(text: &str, n: usize, (batch, head): (u64, u64)) -> Action {
    Action::Import(ImportAction::ImportText { name: "the pasted text".into(), text: text.into(), n, batch, head })
}

#[test]
fn mask_mod_import_by_paste_and_file_and_refusals_change_nothing() {
    let mut s = state(BitMatrix::zeros(3));
    let text = "W = 2\ndef mask_mod(b, h, q_idx, kv_idx):\n    return (kv_idx <= q_idx) & (q_idx - kv_idx < W)\n";
    s.apply(paste(text, 4, (0, 0)));
    assert_eq!(rows(&s), ["1...", "11..", ".11.", "..11"]);
    assert!(s.message.clone().unwrap().text.contains("mask_mod `mask_mod`"));
    // A file without N takes the editor's size; with N, its own.
    s.apply(Action::Import(ImportAction::ImportFile {
        name: "m.py".into(),
        bytes: b"m = lambda b, h, q, k: k == 0".to_vec(),
    }));
    assert_eq!(rows(&s), ["1...", "1...", "1...", "1..."]);
    s.apply(Action::Import(ImportAction::ImportFile {
        name: "n.py".into(),
        bytes: b"N = 2\nm = lambda b, h, q, k: k == q".to_vec(),
    }));
    assert_eq!(rows(&s), ["1.", ".1"]);
    // Refused texts name the construct and its line, and change nothing.
    let (rev, doc) = (s.editor.revision, s.editor.doc.clone());
    for bad in
        ["def f(b, h, q, k):\n    return MASK[q, k]\n", "def f(b, h, q, k):\n    return torch.where(q > k, 1, 0)\n"]
    {
        s.apply(paste(bad, 4, (0, 0)));
        assert_eq!((s.editor.revision, &s.editor.doc), (rev, &doc));
        let m = s.message.clone().unwrap();
        assert_eq!(m.level, Level::Error);
        assert!(m.text.contains("line 2, column 12") && m.text.contains("Nothing was changed"), "{}", m.text);
        // The paste box is told the place; the document, its revision and undo are not touched.
        assert_eq!(s.editor.paste_refusal.as_ref().map(|r| (r.line, r.col)), Some((2, 12)));
    }
    s.apply(Action::Edit(EditAction::Undo));
    assert_eq!(s.n(), 4);
}

#[test]
fn a_refused_paste_keeps_its_place_for_the_box_and_changes_nothing_else() {
    let mut s = state(BitMatrix::zeros(3));
    s.apply(paste("def m(b, h, q, k):\n    return k <= q\n", 4, (0, 0)));
    assert_eq!(s.editor.paste_refusal, None);
    let (rev, doc, can_undo) = (s.editor.revision, s.editor.doc.clone(), s.can_undo());
    // Line 3 is refused at the subscript (column 16): the box shows it dedented, the caret under it.
    let bad = "MASK = None\r\ndef mask_mod(b, h, q_idx, kv_idx):\r\n    return MASK[q_idx, kv_idx]\r\n";
    s.apply(paste(bad, 4, (0, 0)));
    assert_eq!((s.editor.revision, &s.editor.doc, s.can_undo()), (rev, &doc, can_undo));
    let r = s.editor.paste_refusal.clone().expect("a refusal with its place");
    assert_eq!((r.line, r.col), (3, 16), "{r:?}");
    assert_eq!(r.source, "return MASK[q_idx, kv_idx]");
    assert_eq!(r.caret, "           ^");
    assert!(r.what.contains("not subscriptable"), "{}", r.what);
    // The place in the text (CRLF counted as two units, as the string is): the `[`.
    let at = bad.find("[q_idx").unwrap() as u32;
    assert_eq!(r.select, (at, at + 1));
    let m = s.message.clone().unwrap();
    assert_eq!(m.level, Level::Error);
    assert!(m.text.contains("line 3, column 16") && m.text.contains(&r.what), "{} / {}", m.text, r.what);
    // The same refusal again is a new one (the box selects the place again).
    s.apply(paste(bad, 4, (0, 0)));
    let again = s.editor.paste_refusal.clone().unwrap();
    assert!(again.seq > r.seq && again.line == r.line);
    // Undo still goes back past the refusals to what was there before the good paste.
    s.apply(Action::Edit(EditAction::Undo));
    assert_eq!(s.n(), 3);
    s.apply(Action::Edit(EditAction::Redo));
    assert_eq!(s.n(), 4);
    // A refusal without a place (a bad grid) clears it; so does a successful import.
    s.apply(paste(bad, 4, (0, 0)));
    let rev = s.editor.revision;
    s.apply(paste("1.\n1", 4, (0, 0)));
    assert_eq!((s.editor.paste_refusal.clone(), s.editor.revision), (None, rev));
    s.apply(paste(bad, 4, (0, 0)));
    assert!(s.editor.paste_refusal.is_some());
    s.apply(paste("def m(b, h, q, k):\n    return k == q\n", 2, (0, 0)));
    assert_eq!((s.editor.paste_refusal.clone(), rows(&s)), (None, vec!["1.".to_string(), ".1".to_string()]));
    // A file's successful import clears it too.
    s.apply(paste(bad, 4, (0, 0)));
    s.apply(Action::Import(ImportAction::ImportFile {
        name: "m.py".into(),
        bytes: b"m = lambda b, h, q, k: k == 0".to_vec(),
    }));
    assert_eq!(s.editor.paste_refusal, None);
}

#[test]
fn a_refused_line_is_clipped_around_its_place_with_unicode_and_tabs_counted_as_the_browser_does() {
    // Columns count characters; the selection counts UTF-16 units (an emoji is two).
    let text = "\u{feff}# 😀 é\nx = 1\n\tdef = 😀 + y\n";
    let r = PasteRefusal::new(text, 3, 8, "why".into(), 0);
    assert_eq!((r.source.as_str(), r.caret.as_str()), ("def = 😀 + y", "      ^"));
    let at = text.encode_utf16().count() - "😀 + y\n".encode_utf16().count();
    assert_eq!(r.select, (at as u32, at as u32 + 2));
    // Past the end of its line: an empty range there; past the last line: the text's end.
    let r = PasteRefusal::new("ab\ncd", 1, 9, "why".into(), 0);
    assert_eq!((r.select, r.caret.as_str()), ((2, 2), "  ^"));
    let r = PasteRefusal::new("ab\ncd", 5, 1, "why".into(), 0);
    assert_eq!((r.select, r.source.as_str()), ((5, 5), ""));
    // A long line: cut around the place, which stays in view.
    let long = format!("    return {} + bad_call(q) + {}", "a".repeat(60), "b".repeat(60));
    let col = long.find("bad_call").unwrap() + 1;
    let r = PasteRefusal::new(&long, 1, col, "why".into(), 0);
    assert!(r.source.chars().count() <= REFUSAL_WIDTH && r.source.starts_with('…') && r.source.ends_with('…'));
    let caret = r.caret.chars().count() - 1;
    assert!(r.source.chars().skip(caret).collect::<String>().starts_with("bad_call"), "{r:?}");
    // A short line is shown whole.
    assert_eq!(PasteRefusal::new("x = f(1)", 1, 5, "why".into(), 0).source, "x = f(1)");
}

#[test]
fn a_mask_mod_is_read_at_the_pasted_batch_and_head_and_says_what_it_reads_and_skips() {
    let mut s = state(BitMatrix::zeros(3));
    // A per-head window: head h sees h keys back.
    let heads = "def per_head(b, h, q_idx, kv_idx):\n    return (kv_idx <= q_idx) & (q_idx - kv_idx <= h)\n";
    s.apply(paste(heads, 4, (0, 0)));
    assert_eq!(rows(&s), ["1...", ".1..", "..1.", "...1"]);
    s.apply(paste(heads, 4, (0, 1)));
    assert_eq!(rows(&s), ["1...", "11..", ".11.", "..11"]);
    let m = s.message.clone().unwrap().text;
    assert!(m.contains("reads h: shown at h = 1; other heads give other masks"), "{m}");
    assert!(!m.contains("Skipped"), "{m}");
    let both = "def m(b, h, q, k):\n    return (k <= q) & ((q - k) <= b + h)\n";
    s.apply(paste(both, 4, (2, 1)));
    assert_eq!(rows(&s), ["1...", "11..", "111.", "1111"]);
    let m = s.message.clone().unwrap().text;
    assert!(m.contains("reads b and h: shown at b = 2, h = 1; other batches and heads give"), "{m}");
    // A mask that reads neither says nothing about them, whatever b and h are.
    s.apply(paste("def m(b, h, q, k):\n    return k <= q\n", 3, (5, 7)));
    assert_eq!(rows(&s), ["1..", "11.", "111"]);
    assert!(!s.message.clone().unwrap().text.contains("reads"), "{:?}", s.message);
    // Unsupported module-level statements the mask does not need are skipped, and counted.
    let skips = "import torch\nmodel = torch.nn.Linear(4, 4)\nopt = torch.optim.SGD(model.parameters())\n\
                 def m(b, h, q, k):\n    return k <= q\n";
    s.apply(paste(skips, 2, (0, 0)));
    assert_eq!(rows(&s), ["1.", "11"]);
    let m = s.message.clone().unwrap().text;
    assert!(m.contains("Skipped 2 statements; the first, line 2: "), "{m}");
}

#[test]
fn exports_come_from_the_core_for_every_kind() {
    let s = state(BitMatrix::from_fn(8, |q, k| k <= q));
    for kind in ExportKind::ALL {
        let bytes = s.export_bytes(kind).unwrap();
        assert_eq!(bytes, interop::export(&s.editor.doc.to_file(), kind, 1).unwrap(), "{}", kind.name());
    }
    assert!(s.export_bytes(ExportKind::Npy).unwrap().starts_with(interop::NPY_MAGIC));
    assert!(String::from_utf8(s.export_bytes(ExportKind::Flex).unwrap()).unwrap().contains("def mask_mod"));
    assert!(
        s.editor.derived.flash.starts_with("yes: flash_attn_func(q, k, v, causal=True"),
        "{}",
        s.editor.derived.flash
    );
    assert!(s.editor.derived.flashmask.starts_with("yes"), "{}", s.editor.derived.flashmask);
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

fn block(o: BlockOptions) -> FamilySpec {
    FamilySpec::Builtin(BuiltinFamily::Block(o))
}

fn butterfly(o: ButterflyOptions) -> FamilySpec {
    FamilySpec::Builtin(BuiltinFamily::Butterfly(o))
}

fn derived(s: &mut AppState, spec: FamilySpec) -> Rc<Design> {
    s.apply(Action::Designer(DesignerAction::Derive(spec)));
    s.designer.design.clone().unwrap_or_else(|| panic!("no design: {:?}", s.message))
}

#[test]
fn designer_derives_the_three_case_studies() {
    let mut s = state(BitMatrix::zeros(2));
    s.apply(Action::View(ViewAction::SetView(View::Designer)));
    assert_eq!(s.view, View::Designer);
    let d = derived(&mut s, FamilySpec::Builtin(BuiltinFamily::Autoregressive(AutoregressiveOptions::new(5))));
    let r = d.derivation.report();
    assert_eq!((r.nodes_before, r.nodes_after), (10, 4));
    assert_eq!(d.dense().to_row_strings(), ["1...", "11..", "111.", "1111"]);
    // w_1..w_4 of w_0..w_4 are targets; each of the 4 positions predicts the next token.
    assert_eq!((r.target_tokens, r.sample_tokens, r.supervision_density), (4, 5, 0.8));
    assert_eq!(r.loss_position_share, 1.0);
    // The first node serves every task; the last only the longest.
    assert_eq!(d.served[0], [0, 1, 2, 3]);
    assert_eq!(d.served[3], [3]);
    assert_eq!(d.served_text(0), "all 4 tasks");
    assert_eq!(d.served_text(3), d.task_short(3));
    let params = BTreeMap::from([("s".to_string(), "2".to_string())]);
    let two_stream = build_preset("block-two-stream", 6, &params, MAX_EDIT_N).unwrap();
    let d = derived(&mut s, block(BlockOptions::new(6, 2)));
    assert_eq!(*d.dense(), two_stream);
    let bf = build_preset("butterfly", 4, &BTreeMap::new(), MAX_EDIT_N).unwrap();
    let d = derived(&mut s, butterfly(ButterflyOptions::new(4)));
    assert_eq!(*d.dense(), bf);
    let r = d.derivation.report();
    assert_eq!((r.nodes_before, r.nodes_after), (16, 10));
    assert!(r.leaks.is_empty());
    assert!(d.to_json().contains("\"sparse_mask\""));
    // The exported object is the core's (the one `hasseflow derive --json` prints), with the
    // paper's supervision density (4 of 4 tokens) and the loss position share (4 of 12 positions).
    let v: serde_json::Value = serde_json::from_str(&d.to_json()).expect("JSON");
    assert_eq!(v, d.derivation.to_json());
    assert_eq!((v["target_tokens"].as_u64(), v["sample_tokens"].as_u64()), (Some(4), Some(4)));
    assert_eq!(v["supervision_density"].as_f64(), Some(1.0));
    assert_eq!(v["labelled_positions"].as_u64(), Some(4));
    assert_eq!(v["loss_position_share"].as_f64(), Some(4.0 / 12.0));
    assert_eq!(s.designer.seq, 3);
    // Every option of THEORY §6 reaches the core: the derived mask equals the preset built with it.
    let mut options = BTreeMap::from([
        ("s".to_string(), "2".to_string()),
        ("clean".to_string(), "causal".to_string()),
        ("query".to_string(), "causal".to_string()),
        ("order".to_string(), "interleaved".to_string()),
        ("prompt".to_string(), "1".to_string()),
    ]);
    let spec = block(BlockOptions {
        clean: Inner::Causal,
        query: Inner::Causal,
        prompt: 1,
        order: TwoStreamOrder::Interleaved,
        ..BlockOptions::new(6, 2)
    });
    let d = derived(&mut s, spec);
    assert_eq!(*d.dense(), build_preset("block-two-stream", 6, &options, MAX_EDIT_N).unwrap());
    options.insert("drop_last".to_string(), "true".to_string());
    options.insert("order".to_string(), "grouped".to_string());
    let spec = block(BlockOptions {
        clean: Inner::Causal,
        query: Inner::Causal,
        prompt: 1,
        minimal: true,
        ..BlockOptions::new(6, 2)
    });
    assert_eq!(*derived(&mut s, spec).dense(), build_preset("block-two-stream", 6, &options, MAX_EDIT_N).unwrap());
    // A wider aggregate still derives the butterfly mask, leak-free.
    let d = derived(
        &mut s,
        butterfly(ButterflyOptions { aggregate: Aggregate::Neighbours(2), ..ButterflyOptions::new(5) }),
    );
    assert_eq!(*d.dense(), build_preset("butterfly", 5, &BTreeMap::new(), MAX_EDIT_N).unwrap());
    assert!(d.derivation.report().leaks.is_empty());
    assert_eq!(s.designer.seq, 6);
    // Hover: only merged nodes that exist.
    s.apply(Action::Designer(DesignerAction::HoverMerged(Some(3))));
    assert_eq!(s.designer.hover, Some(3));
    s.apply(Action::Designer(DesignerAction::HoverMerged(Some(999))));
    assert_eq!(s.designer.hover, None);
}

#[test]
fn opening_the_derived_mask_is_one_undo_step_with_labels() {
    let mut s = state(BitMatrix::zeros(3));
    s.apply(Action::Designer(DesignerAction::OpenDerived));
    assert_eq!(s.message.as_ref().map(|m| m.level), Some(Level::Error));
    assert!(!s.can_undo());
    s.apply(Action::View(ViewAction::SetView(View::Designer)));
    let d = derived(&mut s, butterfly(ButterflyOptions::new(3)));
    s.apply(Action::Designer(DesignerAction::OpenDerived));
    assert_eq!(s.view, View::Editor);
    assert_eq!(*s.editor.doc.mask, *d.dense());
    assert_eq!(s.editor.doc.labels.as_deref().map(Vec::len), Some(9));
    assert_eq!(s.editor.doc.labels.as_ref().unwrap()[0], d.positions[0]);
    s.apply(Action::Edit(EditAction::Undo));
    assert_eq!(s.n(), 3);
    assert!(s.editor.doc.labels.is_none());
}

#[test]
fn opening_a_derived_mask_keeps_the_provenance_the_cli_writes() {
    // What `hasseflow derive ... --mask-out` records (pinned in crates/cli/tests/cli.rs,
    // `derive_mask_out_records_the_preset_it_rebuilds`), so the flex export takes the closed form.
    let block_params = serde_json::json!({
        "s": 2, "clean": "full", "query": "full", "prompt": 0, "drop_last": false, "order": "grouped"});
    let cases = [
        (block(BlockOptions::new(8, 2)), "block-two-stream", 8, block_params, (15, "m@7")),
        (butterfly(ButterflyOptions::new(4)), "butterfly", 4, serde_json::json!({"minimal": false}), (8, "w'_0[w_1]")),
    ];
    for (spec, preset, n, params, (at, label)) in cases {
        let mut s = state(BitMatrix::zeros(3));
        let d = derived(&mut s, spec.clone());
        s.apply(Action::Designer(DesignerAction::OpenDerived));
        assert_eq!(s.view, View::Editor);
        let p =
            s.editor.doc.provenance.clone().unwrap_or_else(|| panic!("{} opened without provenance", spec.describe()));
        assert_eq!((p.preset.as_str(), p.n), (preset, n));
        assert_eq!(serde_json::to_value(&p.params).unwrap(), params);
        // The same file the CLI writes: the core's mask file of the derivation, labels included.
        let FamilySpec::Builtin(b) = &spec else { unreachable!() };
        let cli = b.mask_file(&d.derivation, false);
        assert_eq!(
            (s.editor.doc.provenance.as_ref(), s.editor.doc.labels.as_deref().map(Vec::as_slice)),
            (cli.provenance.as_ref(), cli.labels.as_deref())
        );
        let labels = s.editor.doc.labels.clone().unwrap_or_default();
        assert_eq!((labels.len(), labels[at].as_str()), (s.n(), label));
        let flex = String::from_utf8(s.export_bytes(ExportKind::Flex).unwrap()).unwrap();
        assert!(flex.contains(&format!("# Closed form of preset '{preset}'")), "{flex}");
        assert!(!flex.contains("return MASK[q_idx, kv_idx]"), "{flex}");
    }
    // MAE reproduces no preset: labels, no provenance, the lookup form.
    let mut s = state(BitMatrix::zeros(3));
    derived(&mut s, FamilySpec::Builtin(BuiltinFamily::Mae(MaeOptions::new(6, 2))));
    s.apply(Action::Designer(DesignerAction::OpenDerived));
    assert!(s.editor.doc.provenance.is_none() && s.editor.doc.labels.is_some());
    assert!(
        String::from_utf8(s.export_bytes(ExportKind::Flex).unwrap()).unwrap().contains("return MASK[q_idx, kv_idx]")
    );
}

#[test]
fn family_files_derive_and_bad_ones_change_nothing() {
    let mut s = state(BitMatrix::zeros(3));
    let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/family_example.json")).unwrap();
    let d = derived(&mut s, FamilySpec::File { name: "family_example.json".into(), bytes: bytes.clone() });
    let family = hasseflow_core::derive::parse_family(&bytes).unwrap();
    let expected = hasseflow_core::derive::derive(&family).unwrap();
    assert_eq!(d.dense(), expected.dense());
    let (rev, doc) = (s.editor.revision, s.editor.doc.clone());
    s.apply(Action::Designer(DesignerAction::Derive(FamilySpec::File {
        name: "bad.json".into(),
        bytes: b"{\"format\": 1".to_vec(),
    })));
    let m = s.message.clone().unwrap();
    assert_eq!(m.level, Level::Error);
    assert!(m.text.starts_with("could not derive family file bad.json") && m.text.ends_with("Nothing was changed."));
    assert!(Rc::ptr_eq(s.designer.design.as_ref().unwrap(), &d), "the last design stays");
    assert_eq!((s.editor.revision, &s.editor.doc), (rev, &doc));
    s.apply(Action::Designer(DesignerAction::Derive(butterfly(ButterflyOptions::new(MAX_DESIGN_N + 1)))));
    assert!(s.message.unwrap().text.contains("handles n up to"));
}

/// What the shell would send back for `req`: the CPU path's run, timed at 1 ms.
fn run_for(req: &FlowRequest) -> FlowRun {
    use hasseflow_core::flow::{FlowModel, FlowReport, cpu};
    let model = FlowModel::new(req.key.config, req.source.n()).expect("valid settings");
    let masks = req.source.masks(&req.key.config).expect("masks fit the model");
    let raw = cpu::run_flow(&model, &masks);
    let report = FlowReport::new(&raw, &masks);
    FlowRun { raw: Rc::new(raw), report, millis: 1.0, fallback: Some("no WebGPU adapter".into()) }
}

fn small_flow() -> FlowSettings {
    FlowSettings {
        config: hasseflow_core::flow::FlowConfig { d_model: 16, heads: 2, layers: 3, seed: 5 },
        ..FlowSettings::default()
    }
}

#[test]
fn flow_runs_are_requested_only_in_the_flow_view_and_not_mid_stroke() {
    let mut s = state(BitMatrix::from_fn(6, |q, k| k <= q));
    assert_eq!(s.flow_request(), None, "the order view is shown");
    s.apply(Action::View(ViewAction::SetSideView(SideView::Flow)));
    let req = s.flow_request().expect("the Flow view asks for a run");
    assert_eq!(req.key.revision, s.editor.revision);
    assert_eq!(req.source, FlowSource::Mask(s.editor.doc.mask.clone()));
    s.apply(Action::Edit(EditAction::StrokeStart(0, 5)));
    assert_eq!(s.flow_request(), None, "no run while painting");
    s.apply(Action::Edit(EditAction::StrokeEnd));
    let after = s.flow_request().expect("the stroke's end asks again");
    assert_ne!(after.key, req.key, "a new revision is a new key");
    s.apply(Action::View(ViewAction::SetView(View::Designer)));
    assert_eq!(s.flow_request(), None, "the designer hides the Flow view");
    s.apply(Action::View(ViewAction::SetView(View::Editor)));
    // Every mask the editor holds fits the model (a compile-time check in state.rs); past the
    // model's limit no key exists.
    assert_eq!(s.flow.key(s.editor.revision, MAX_FLOW_N + 1, false), None);
    assert!(s.flow.key(s.editor.revision, MAX_FLOW_N, false).is_some());
}

#[test]
fn a_finished_flow_run_is_shown_and_a_stale_one_is_dropped() {
    let mut s = state(BitMatrix::from_fn(6, |q, k| q >= k && q - k < 2));
    s.apply(Action::Flow(FlowAction::SetSettings(small_flow())));
    s.apply(Action::View(ViewAction::SetSideView(SideView::Flow)));
    let req = s.flow_request().expect("a run is wanted");
    s.apply(Action::Flow(FlowAction::Progress { key: req.key, progress: 0.5 }));
    assert_eq!(s.flow.status_for(s.flow_key()), FlowStatus::Running(0.5));
    // The mask changes while the run is in flight: its report must not be shown.
    paint(&mut s, &[(5, 0)]);
    s.apply(Action::Flow(FlowAction::Finished { key: req.key, run: run_for(&req) }));
    assert_eq!(s.flow.dropped, 1);
    assert!(s.flow.current(s.flow_key()).is_none(), "the stale run is not current");
    s.apply(Action::Flow(FlowAction::Progress { key: req.key, progress: 0.9 }));
    assert_eq!(s.flow.dropped, 2, "late progress of the stale run is dropped too");
    assert_eq!(s.flow.status_for(s.flow_key()), FlowStatus::Idle);
    // The run for the new mask is kept, and no further run is asked for.
    let fresh = s.flow_request().expect("the new mask needs a run");
    s.apply(Action::Flow(FlowAction::Finished { key: fresh.key, run: run_for(&fresh) }));
    let outcome = s.flow.current(s.flow_key()).expect("shown").clone();
    assert_eq!(outcome.run.report.layers.len(), 3);
    assert!(outcome.run.report.exact(), "generic weights: support equals R(L)");
    assert_eq!(outcome.reach.len(), 3);
    assert!(outcome.reach[0].get(5, 0), "the painted cell is in R(1)");
    assert_eq!(s.flow_request(), None);
    let report: serde_json::Value = serde_json::from_str(&outcome.report_json()).expect("JSON");
    assert_eq!(report["backend"], "cpu");
    assert_eq!(report["exact"], true);
    assert_eq!(report["config"]["layers"], 3);
    assert_eq!(report["layers"].as_array().map(Vec::len), Some(3));
    assert_eq!(report["layers"][0]["reach"], outcome.reach[0].count_ones());
    assert_eq!(report["fallback"], "no WebGPU adapter");
    // Undo goes back to a revision with no run: a new one is requested (revisions only grow).
    s.apply(Action::Edit(EditAction::Undo));
    assert!(s.flow.current(s.flow_key()).is_none());
    assert!(s.flow_request().is_some());
}

#[test]
fn flow_settings_are_checked_and_the_threshold_needs_no_new_run() {
    let mut s = state(BitMatrix::from_fn(12, |q, k| q >= k && q - k < 2));
    let mut settings = small_flow();
    settings.config.layers = 8;
    s.apply(Action::Flow(FlowAction::SetSettings(settings)));
    s.apply(Action::View(ViewAction::SetSideView(SideView::Flow)));
    let req = s.flow_request().expect("a run is wanted");
    s.apply(Action::Flow(FlowAction::Finished { key: req.key, run: run_for(&req) }));
    assert!(s.flow.current(s.flow_key()).expect("shown").run.report.exact());
    // A stricter threshold re-reads the same run: faint 8-hop paths now count as misses.
    s.apply(Action::Flow(FlowAction::SetSettings(FlowSettings { threshold: 1e-2, ..settings })));
    assert_eq!(s.flow_request(), None, "no new run for a threshold");
    let strict = s.flow.current(s.flow_key()).expect("still shown").clone();
    assert_eq!(strict.run.report.threshold, 1e-2);
    assert!(strict.run.report.layers[7].false_negatives > 0);
    // Bad settings are refused with a message and change nothing.
    for bad in [
        FlowSettings { config: hasseflow_core::flow::FlowConfig { heads: 3, ..settings.config }, ..settings },
        FlowSettings { config: hasseflow_core::flow::FlowConfig { layers: 17, ..settings.config }, ..settings },
        FlowSettings { threshold: 0.0, ..settings },
        FlowSettings { threshold: f64::NAN, ..settings },
    ] {
        s.apply(Action::Flow(FlowAction::SetSettings(bad)));
        assert_eq!(s.message.as_ref().map(|m| m.level), Some(Level::Error), "{bad:?}");
        assert_eq!(s.flow.settings.config, settings.config);
        assert_eq!(s.flow.settings.threshold, 1e-2);
        assert!(s.flow.current(s.flow_key()).is_some(), "the shown run stays");
    }
    // A new seed is a new key: the old run is no longer current.
    let seed = FlowSettings { config: hasseflow_core::flow::FlowConfig { seed: 6, ..settings.config }, ..settings };
    s.apply(Action::Flow(FlowAction::SetSettings(seed)));
    assert!(s.flow.current(s.flow_key()).is_none());
    assert_eq!(s.flow_request().map(|r| r.key.config.seed), Some(6));
}

#[test]
fn a_failed_flow_run_waits_for_retry() {
    let mut s = state(BitMatrix::from_fn(4, |q, k| k <= q));
    s.apply(Action::View(ViewAction::SetSideView(SideView::Flow)));
    let req = s.flow_request().expect("a run is wanted");
    s.apply(Action::Flow(FlowAction::Failed { key: req.key, error: "no WebGPU adapter".into() }));
    assert_eq!(s.flow.status_for(s.flow_key()), FlowStatus::Failed("no WebGPU adapter".into()));
    assert_eq!(s.flow_request(), None, "no retry loop");
    s.apply(Action::Flow(FlowAction::Retry));
    assert_eq!(s.flow_request().map(|r| r.key), Some(req.key));
}

#[test]
fn the_flow_view_shares_the_layer_control_up_to_the_model_depth() {
    let mut s = state(BitMatrix::from_fn(5, |q, k| k <= q));
    assert_eq!(s.max_layer(), 2, "causal: L* = 1");
    s.apply(Action::View(ViewAction::SetSideView(SideView::Flow)));
    assert_eq!(s.max_layer(), 4, "the default model has 4 layers");
    s.apply(Action::View(ViewAction::SetLayer(4)));
    assert_eq!(s.flow_layer(), Some(4));
    s.apply(Action::Flow(FlowAction::SetSettings(small_flow())));
    assert_eq!(s.editor.layer, 3, "clamped to the new model's depth");
    s.apply(Action::View(ViewAction::SetLayer(0)));
    assert_eq!(s.flow_layer(), None, "layer 0 is the inputs");
    s.apply(Action::View(ViewAction::SetSideView(SideView::Order)));
    s.apply(Action::View(ViewAction::SetLayer(9)));
    assert_eq!(s.editor.layer, 2);
}

#[test]
fn a_flow_picture_marks_exactly_the_cells_where_support_and_reach_differ() {
    let mut s = state(BitMatrix::from_fn(12, |q, k| q >= k && q - k < 2));
    let settings = FlowSettings {
        config: hasseflow_core::flow::FlowConfig { layers: 8, ..small_flow().config },
        ..FlowSettings::default()
    };
    s.apply(Action::Flow(FlowAction::SetSettings(settings)));
    s.apply(Action::View(ViewAction::SetSideView(SideView::Flow)));
    let req = s.flow_request().expect("a run is wanted");
    s.apply(Action::Flow(FlowAction::Finished { key: req.key, run: run_for(&req) }));
    let exact = s.flow.current(s.flow_key()).expect("shown").picture(8, FlowMap::Influence);
    assert_eq!(exact.disagree.count_ones(), 0);
    assert_eq!(exact.support, exact.reach);
    assert!(exact.lo_decade < -1 && exact.lo_decade >= -12);
    for i in 0..144 {
        // Zero exactly outside R(L); the top of the scale is the layer's maximum.
        assert_eq!(exact.shade[i].is_none(), !exact.reach.get(i / 12, i % 12), "cell {i}");
    }
    assert!(exact.shade.iter().flatten().any(|&t| t == 1.0));
    s.apply(Action::Flow(FlowAction::SetSettings(FlowSettings { threshold: 1e-2, ..settings })));
    let o = s.flow.current(s.flow_key()).expect("shown").clone();
    let strict = o.picture(8, FlowMap::Influence);
    let misses = o.run.report.layers[7].false_negatives;
    assert!(misses > 0);
    assert_eq!(strict.disagree.count_ones(), misses, "the marks are the report's misses");
    assert_eq!(strict.disagree, strict.reach.and(&strict.support.not()), "all of them inside R(L)");
    // The rollout view: its support is R(L) exactly, whatever the influence threshold.
    s.apply(Action::Flow(FlowAction::SetMap(FlowMap::Rollout)));
    assert_eq!(s.flow.map, FlowMap::Rollout);
    for l in 1..=8 {
        let roll = o.picture(l, FlowMap::Rollout);
        assert_eq!(roll.support, roll.reach, "layer {l}");
        assert_eq!(roll.disagree.count_ones(), 0);
        assert!(roll.shade.iter().flatten().all(|t| (0.0..=1.0).contains(t)));
    }
}

#[test]
fn a_layer_stack_from_a_file_is_kept_exported_and_run_by_the_flow_view() {
    let mut s = state(BitMatrix::zeros(2));
    // Causal then anti-causal: everyone sees everyone after two layers; the mask alone is causal.
    let json = br#"{"format":"hasseflow-mask","version":1,"n":4,"rows":["1...","11..","111.","1111"],
        "stack":{"mode":"once","layers":[{"heads":[{"rows":["1...","11..","111.","1111"]}]},
                                          {"heads":[{"rows":["1111",".111","..11","...1"]}]}]}}"#;
    s.apply(Action::Import(ImportAction::ImportFile { name: "stack.json".into(), bytes: json.to_vec() }));
    assert!(s.message.as_ref().is_some_and(|m| m.text.contains("2-layer stack")), "{:?}", s.message);
    let json = hasseflow_core::format::write_json(&s.editor.doc.to_file(), hasseflow_core::format::Encoding::Auto);
    let stack = parse_mask_file(json.as_bytes()).map(|f| f.stack).unwrap_or_else(|e| panic!("export re-imports: {e}"));
    assert_eq!(stack.map(|(st, _)| st.layers().len()), Some(2), "the stack survives export");
    // Editing the grid keeps the stack; the Flow view runs it (and R(L) is the stack's).
    paint(&mut s, &[(1, 2)]);
    assert!(s.editor.doc.stack.is_some());
    s.apply(Action::Flow(FlowAction::SetSettings(small_flow())));
    s.apply(Action::View(ViewAction::SetSideView(SideView::Flow)));
    let req = s.flow_request().expect("a run is wanted");
    assert!(req.key.stack);
    assert!(matches!(req.source, FlowSource::Stack(_)));
    s.apply(Action::Flow(FlowAction::Finished { key: req.key, run: run_for(&req) }));
    let o = s.flow.current(s.flow_key()).expect("shown").clone();
    assert!(o.run.report.exact());
    assert_eq!(o.reach[1].count_ones(), 16, "R(2) of causal then anti-causal is full");
    assert_eq!(o.reach[2].count_ones(), 16, "layer 3 is stack layer 1 again (periodic)");
    assert!(
        s.editor.derived.analysis.closure().count_ones() < 16,
        "the grid's analysis is the mask's, not the stack's"
    );
    // Unticking the stack is a new key: the mask in every layer.
    s.apply(Action::Flow(FlowAction::SetSettings(FlowSettings { use_stack: false, ..small_flow() })));
    let req = s.flow_request().expect("a run for the mask");
    assert!(!req.key.stack);
    assert_eq!(req.source, FlowSource::Mask(s.editor.doc.mask.clone()));
    // Resizing drops the stack (its masks no longer fit), undo brings it back.
    s.apply(Action::Edit(EditAction::Resize(5)));
    assert!(s.editor.doc.stack.is_none());
    assert!(s.message.as_ref().is_some_and(|m| m.text.contains("dropped")));
    s.apply(Action::Edit(EditAction::Undo));
    assert!(s.editor.doc.stack.is_some());
}

#[test]
fn kernel_parameter_files_import_as_masks() {
    use hasseflow_core::interop::{flash_json, flashmask_json};
    let prefix = BitMatrix::from_fn(6, |q, k| k <= q || k < 2);
    let mut s = state(BitMatrix::zeros(3));
    s.apply(Action::Import(ImportAction::ImportFile {
        name: "fm.json".into(),
        bytes: flashmask_json(&prefix).into_bytes(),
    }));
    assert_eq!(*s.editor.doc.mask, prefix);
    assert!(s.message.as_ref().is_some_and(|m| m.text.contains("kernel parameters")));
    // A FlashAttention window takes the editor's size (6 now).
    let window = BitMatrix::from_fn(6, |q, k| k <= q && q - k < 3);
    s.apply(Action::Import(ImportAction::ImportFile {
        name: "fa.json".into(),
        bytes: flash_json(&window).into_bytes(),
    }));
    assert_eq!(*s.editor.doc.mask, window);
    assert!(s.message.as_ref().is_some_and(|m| m.text.contains("at the editor's size")));
    // A refused verdict changes nothing.
    let before = s.editor.doc.clone();
    s.apply(Action::Import(ImportAction::ImportFile {
        name: "no.json".into(),
        bytes: flash_json(&BitMatrix::zeros(4)).into_bytes(),
    }));
    assert_eq!(s.editor.doc, before);
    assert!(s.message.as_ref().is_some_and(|m| m.level == Level::Error && m.text.contains("cannot represent")));
    s.apply(Action::Edit(EditAction::Undo));
    assert_eq!(*s.editor.doc.mask, prefix, "each import is one undo step");
}

/// One family of each kind, with options off their defaults, and a family file.
fn example_specs() -> [FamilySpec; 5] {
    [
        FamilySpec::Builtin(BuiltinFamily::Autoregressive(AutoregressiveOptions {
            bidirectional: true,
            ..AutoregressiveOptions::new(5)
        })),
        block(BlockOptions {
            query: Inner::Causal,
            prompt: 1,
            minimal: true,
            order: TwoStreamOrder::Interleaved,
            ..BlockOptions::new(6, 2)
        }),
        butterfly(ButterflyOptions { aggregate: Aggregate::Mask, ..ButterflyOptions::new(4) }),
        FamilySpec::Builtin(BuiltinFamily::Mae(MaeOptions {
            stride: 3,
            causal_encoder: true,
            ..MaeOptions::new(8, 2)
        })),
        FamilySpec::File { name: "f.json".into(), bytes: b"{\"tasks\": []}".to_vec() },
    ]
}

#[test]
fn the_designer_family_is_autosaved_and_derived_again_when_the_designer_opens() {
    let specs = example_specs();
    for spec in &specs {
        let json = spec.to_json().expect("savable");
        assert_eq!(FamilySpec::from_json(&json).as_ref(), Ok(spec), "{json}");
    }
    assert_eq!(FamilySpec::File { name: "b".into(), bytes: vec![0xff, 0xfe] }.to_json(), None, "not UTF-8: not saved");
    let mut s = state(BitMatrix::zeros(2));
    s.apply(Action::Designer(DesignerAction::Restore(specs[2].to_json().expect("savable"))));
    assert!(s.designer.design.is_none(), "nothing is derived before the designer opens");
    s.apply(Action::View(ViewAction::SetView(View::Designer)));
    let d = s.designer.design.clone().expect("derived on opening");
    assert_eq!(d.spec, specs[2]);
    assert_eq!(s.designer.pending, None);
    // A broken save is reported and changes nothing.
    s.apply(Action::Designer(DesignerAction::Restore("{\"family\": \"block\", \"n\": 3}".into())));
    assert!(s.message.as_ref().is_some_and(|m| m.level == Level::Error && m.text.contains("missing field `block`")));
    assert!(s.designer.design.as_ref().is_some_and(|x| Rc::ptr_eq(x, &d)));
    assert_eq!(s.designer.pending, None);
    // A save is the core's JSON of the family; options left out take their defaults.
    assert_eq!(
        specs[2].to_json().as_deref(),
        Some(r#"{"family":"butterfly","n":4,"minimal":false,"aggregate":"mask"}"#)
    );
    assert_eq!(FamilySpec::from_json(r#"{"family":"block","n":6,"block":2}"#), Ok(block(BlockOptions::new(6, 2))));
}

/// What earlier versions of the app wrote to autosaves and designer links for each family.
#[test]
fn autosaves_and_links_in_the_earlier_flat_shape_still_load() {
    let [autoregressive, block_spec, butterfly_mask, mae, file] = example_specs();
    let old = [
        (r#"{"family":"autoregressive","n":5,"bidirectional":true,"pad":false}"#, autoregressive),
        (
            r#"{"family":"block","n":6,"block":2,"prompt":1,"minimal":true,"clean_causal":false,"query_causal":true,"interleaved":true}"#,
            block_spec,
        ),
        (
            r#"{"family":"block","n":6,"block":2,"prompt":0,"minimal":false,"clean_causal":true,"query_causal":false,"interleaved":false}"#,
            block(BlockOptions { clean: Inner::Causal, ..BlockOptions::new(6, 2) }),
        ),
        (r#"{"family":"butterfly","n":4,"minimal":false,"mask_token":true,"radius":2}"#, butterfly_mask),
        (
            r#"{"family":"butterfly","n":5,"minimal":true,"mask_token":false,"radius":2}"#,
            butterfly(ButterflyOptions {
                minimal: true,
                aggregate: Aggregate::Neighbours(2),
                ..ButterflyOptions::new(5)
            }),
        ),
        (r#"{"family":"mae","n":8,"span":2,"stride":3,"causal_encoder":true}"#, mae),
        (r#"{"family":"file","name":"f.json","text":"{\"tasks\": []}"}"#, file),
    ];
    for (json, want) in &old {
        assert_eq!(FamilySpec::from_json(json).as_ref(), Ok(want), "{json}");
    }
    // An old autosave derives when the designer opens; an old link derives the same family.
    let mut s = state(BitMatrix::zeros(2));
    s.apply(Action::Designer(DesignerAction::Restore(old[1].0.into())));
    s.apply(Action::View(ViewAction::SetView(View::Designer)));
    assert_eq!(s.designer.design.as_ref().map(|d| d.spec.clone()), Some(old[1].1.clone()), "{:?}", s.message);
    let mut t = state(BitMatrix::zeros(2));
    t.apply(Action::Import(ImportAction::LoadShared(format!("#{}", share::encode_design(old[4].0)))));
    assert_eq!(t.designer.design.as_ref().map(|d| d.spec.clone()), Some(old[4].1.clone()), "{:?}", t.message);
    // A mistyped old flag is refused by name; an unknown field too.
    let bad =
        FamilySpec::from_json(r#"{"family":"block","n":6,"block":2,"interleaved":"yes"}"#).unwrap_err().to_string();
    assert!(bad.contains("unknown field `interleaved`"), "{bad}");
    let bad = FamilySpec::from_json(r#"{"family":"mae","n":6,"span":2,"strid":1}"#).unwrap_err().to_string();
    assert!(bad.contains("unknown field `strid`"), "{bad}");
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

#[test]
fn designer_links_derive_the_same_family_and_damaged_ones_change_nothing() {
    let mut s = state(BitMatrix::zeros(2));
    assert!(s.design_fragment().is_err(), "nothing derived yet");
    let spec = block(BlockOptions { order: TwoStreamOrder::Interleaved, ..BlockOptions::new(6, 2) });
    s.apply(Action::Designer(DesignerAction::Derive(spec.clone())));
    let fragment = s.design_fragment().expect("a built-in family has a link");
    assert_eq!(
        s.designer.design.as_ref().map(|d| d.link.clone()),
        Some(Ok(fragment.clone())),
        "computed with the derivation"
    );
    let mut t = state(BitMatrix::zeros(3));
    t.apply(Action::Import(ImportAction::LoadShared(format!("#{fragment}"))));
    assert_eq!(t.view, View::Designer);
    assert_eq!(t.designer.design.as_ref().map(|d| d.spec.clone()), Some(spec));
    assert_eq!(
        t.designer.design.as_ref().map(|d| d.dense().clone()),
        s.designer.design.as_ref().map(|d| d.dense().clone())
    );
    assert_eq!(*t.editor.doc.mask, BitMatrix::zeros(3), "the editor's mask is untouched");
    let before = t.designer.design.clone();
    t.apply(Action::Import(ImportAction::LoadShared("design=%%%".into())));
    assert!(t.message.as_ref().is_some_and(|m| m.level == Level::Error && m.text.contains("design link is damaged")));
    assert!(t.designer.design.as_ref().zip(before.as_ref()).is_some_and(|(a, b)| Rc::ptr_eq(a, b)));
    let file = include_bytes!("../../tests/data/family_example.json").to_vec();
    s.apply(Action::Designer(DesignerAction::Derive(FamilySpec::File {
        name: "family_example.json".into(),
        bytes: file,
    })));
    assert!(s.designer.design.as_ref().is_some_and(|d| matches!(d.spec, FamilySpec::File { .. })), "{:?}", s.message);
    assert_eq!(s.design_fragment(), Err(LinkError::FamilyFile));
    assert!(LinkError::FamilyFile.to_string().contains("shared as the file"));
}

#[test]
fn backend_policy_auto_skips_software_adapters_webgpu_insists_cpu_never_asks() {
    let hw = AdapterSeen { name: "NVIDIA H200".into(), software: false };
    let sw = AdapterSeen { name: "SwiftShader Device".into(), software: true };
    let none: Result<&AdapterSeen, &str> = Err("no adapter");
    assert_eq!(plan_backend(BackendChoice::Auto, Ok(&hw)), BackendPlan::Gpu { fallback: true });
    match plan_backend(BackendChoice::Auto, Ok(&sw)) {
        BackendPlan::Cpu { note: Some(n) } => assert!(n.contains("software (SwiftShader Device)"), "{n}"),
        other => panic!("{other:?}"),
    }
    let unnamed = AdapterSeen { name: " ".into(), software: true };
    assert!(
        matches!(plan_backend(BackendChoice::Auto, Ok(&unnamed)), BackendPlan::Cpu { note: Some(n) } if n.contains("a fallback adapter"))
    );
    assert_eq!(
        plan_backend(BackendChoice::Auto, none),
        BackendPlan::Cpu { note: Some("CPU fallback: no adapter".into()) }
    );
    assert_eq!(plan_backend(BackendChoice::WebGpu, Ok(&sw)), BackendPlan::Gpu { fallback: false });
    assert_eq!(
        plan_backend(BackendChoice::WebGpu, none),
        BackendPlan::Fail("WebGPU is not available: no adapter".into())
    );
    for a in [Ok(&hw), Ok(&sw), none] {
        assert_eq!(plan_backend(BackendChoice::Cpu, a), BackendPlan::Cpu { note: None });
    }
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
fn threshold_and_context_errors_are_typed_and_say_what_is_wrong() {
    assert_eq!(check_threshold(0.5), Ok(()));
    assert_eq!(check_threshold(1.0), Err(ThresholdError(1.0)));
    assert!(check_threshold(f64::NAN).unwrap_err().to_string().contains("strictly between 0 and 1"));
    assert!(ContextError::TooLong(1 << 21).to_string().contains("hasseflow model --context 2097152"));
    let mut s = state(BitMatrix::zeros(3));
    s.apply(Action::Models(ModelsAction::SetContext { n: "12x".into(), docs: String::new(), encoder: String::new() }));
    let m = s.message.as_ref().expect("refused");
    assert_eq!(m.text, "the context length \"12x\" is not a whole number. Nothing was changed.");
}

#[test]
fn a_loaded_preset_records_the_provenance_the_cli_writes() {
    // One rule for both shells (core `preset_provenance`): numbers, fractions and flags typed by
    // the parameter's kind. The app once kept a fraction as text and typed any number-like text.
    let mut s = state(BitMatrix::zeros(2));
    let params = BTreeMap::from([("p".to_string(), "0.3".to_string()), ("causal".to_string(), "true".to_string())]);
    s.apply(Action::Import(ImportAction::LoadPreset { name: "random".into(), n: 8, params: params.clone() }));
    let recorded = s.editor.doc.provenance.clone().expect("a preset records its provenance");
    assert_eq!(recorded, hasseflow_core::presets::preset_provenance("random", 8, &params));
    assert_eq!(recorded.params["p"], serde_json::json!(0.3));
    assert_eq!(recorded.params["causal"], serde_json::json!(true));
    let lists = BTreeMap::from([("segments".to_string(), "3".to_string())]);
    s.apply(Action::Import(ImportAction::LoadPreset { name: "document".into(), n: 3, params: lists }));
    let recorded = s.editor.doc.provenance.clone().expect("a preset records its provenance");
    assert_eq!(recorded.params["segments"], serde_json::json!("3"), "a list stays text, even of one number");
}
