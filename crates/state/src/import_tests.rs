//! Reducer tests of what comes in and goes out ([`ImportAction`]): presets, files, pasted
//! text, links, the autosave, exports.

use hasseflow_core::format::{MaskFile, parse_mask_file};
use hasseflow_core::interop::{self, ExportKind};

use super::test_support::*;
use super::*;

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
        let bytes = s.export_bytes(kind).expect("linked").unwrap();
        assert_eq!(bytes, interop::export(&s.editor.doc.to_file(), kind, 1).unwrap(), "{}", kind.name());
        // The web app's route (the lazily loaded module's answer) gives the same bytes.
        let wired = interop::wire::read_export(&interop::wire::export_answer(&s.export_request(kind).to_json()));
        assert_eq!(wired.as_ref(), Ok(&bytes), "{}", kind.name());
    }
    assert!(s.export_bytes(ExportKind::Npy).expect("linked").unwrap().starts_with(interop::NPY_MAGIC));
    assert!(
        String::from_utf8(s.export_bytes(ExportKind::Flex).expect("linked").unwrap()).unwrap().contains("def mask_mod")
    );
    assert!(
        s.editor.derived.flash.starts_with("yes: flash_attn_func(q, k, v, causal=True"),
        "{}",
        s.editor.derived.flash
    );
    assert!(s.editor.derived.flashmask.starts_with("yes"), "{}", s.editor.derived.flashmask);
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

#[test]
fn a_model_link_opens_the_models_view_at_its_context_and_layer() {
    use hasseflow_core::share::{ModelLink, encode_model};
    let mut s = state(BitMatrix::zeros(2));
    let link = ModelLink {
        gallery: Some("gemma-3-27b-it".into()),
        n: 131072,
        documents: vec![65536, 65536],
        layer: Some(7),
        ..ModelLink::default()
    };
    s.apply(Action::Import(ImportAction::LoadShared(format!("#{}", encode_model(&link)))));
    assert_eq!(s.view, View::Models, "{:?}", s.message);
    assert_eq!(s.models.choice.gallery, Some("gemma-3-27b-it"));
    assert_eq!((s.models.n, s.models.docs.clone(), s.models.layer), (131072, vec![65536, 65536], 7));
    // A config's text opens too; its documents must fit its context.
    let config = hasseflow_core::model::gallery_entry("gemma-3-27b-it").map(|e| e.config().to_string());
    let link = ModelLink { config: config.ok(), name: Some("my.json".into()), n: 4096, ..ModelLink::default() };
    s.apply(Action::Import(ImportAction::LoadShared(encode_model(&link))));
    assert_eq!((s.models.choice.gallery, s.models.choice.source.as_str(), s.models.n), (None, "my.json", 4096));
    // A damaged link, or one naming no model, changes nothing.
    let before = s.models.clone();
    for bad in ["model=%%".to_string(), encode_model(&ModelLink { n: 8, ..ModelLink::default() })] {
        s.apply(Action::Import(ImportAction::LoadShared(bad)));
        assert!(s.message.as_ref().is_some_and(|m| m.text.contains("model link is damaged")), "{:?}", s.message);
        assert_eq!(s.models, before);
    }
}

/// The web app's first download has no `mask_mod` reader: a pasted or dropped `mask_mod` waits for
/// the lazily loaded one, and its answer (through `core::interop::wire`) does exactly what the
/// linked-in reader does: the same mask and message, the same refusal at its place, nothing
/// changed when the reader fails to load or the answer is stale or damaged.
#[test]
fn a_mask_mod_waits_for_the_lazy_reader_and_its_answer_does_what_the_linked_reader_does() {
    let answer = |s: &AppState| {
        // Each input is asked of its module, as the shell's `lazy::answer` does.
        let r = s.editor.reading.clone().expect("a pending read");
        let json = r.request.to_json();
        (
            r.id,
            if r.request.is_mask_mod() { interop::wire::answer(&json) } else { interop::wire::answer_formats(&json) },
        )
    };
    let good = "W = 2\ndef m(b, h, q_idx, kv_idx):\n    return (kv_idx <= q_idx) & (q_idx - kv_idx < W) | (h == 1)\n";
    let bad = "def mask_mod(b, h, q, k):\n    return MASK[q, k]\n";
    // With a byte-order mark, a refusal's place on the first line is counted as the linked reader
    // counts it.
    let (good_bom, bad_bom) =
        (format!("\u{feff}{good}"), "\u{feff}x = MASK[0]\ndef m(b, h, q, k):\n    return k <= q\n");
    for (text, at) in [(good, (0, 1)), (good, (0, 0)), (bad, (0, 0)), (good_bom.as_str(), (0, 0)), (bad_bom, (0, 0))] {
        // The linked reader, as the CLI's core and the tests have it.
        let mut linked = state(BitMatrix::zeros(3));
        linked.apply(paste(text, 5, at));
        // The lazy route.
        let mut lazy = state(BitMatrix::zeros(3));
        lazy.reader_linked = false;
        lazy.apply(paste(text, 5, at));
        assert_eq!((lazy.n(), lazy.editor.revision), (3, 0), "nothing changes before the answer");
        assert!(lazy.message.as_ref().unwrap().text.contains("loading the mask_mod reader"));
        let (id, a) = answer(&lazy);
        lazy.apply(Action::Import(ImportAction::Answered { id, answer: Ok(a) }));
        assert_eq!(lazy.editor.reading, None);
        assert_eq!((rows(&lazy), lazy.editor.revision), (rows(&linked), linked.editor.revision), "{text}");
        assert_eq!(
            lazy.message.as_ref().map(|m| (m.level, &m.text)),
            linked.message.as_ref().map(|m| (m.level, &m.text))
        );
        let place = |s: &AppState| s.editor.paste_refusal.as_ref().map(|r| (r.line, r.col, r.source.clone()));
        assert_eq!(place(&lazy), place(&linked));
    }
    // A dropped file takes the editor's size, as the linked reader does.
    let mut lazy = state(BitMatrix::zeros(4));
    lazy.reader_linked = false;
    lazy.apply(Action::Import(ImportAction::ImportFile {
        name: "m.py".into(),
        bytes: b"m = lambda b, h, q, k: k <= q".to_vec(),
    }));
    let (id, a) = answer(&lazy);
    lazy.apply(Action::Import(ImportAction::Answered { id, answer: Ok(a) }));
    assert_eq!(rows(&lazy), ["1...", "11..", "111.", "1111"]);
    // The reader fails to load, or its answer is damaged: a one-line error, nothing changed.
    let before = rows(&lazy);
    lazy.apply(paste(good, 5, (0, 0)));
    let (id, a) = answer(&lazy);
    lazy.apply(Action::Import(ImportAction::Answered { id, answer: Err("HTTP 404".into()) }));
    let m = lazy.message.clone().unwrap();
    assert_eq!(m.level, Level::Error);
    assert!(m.text.contains("did not load (HTTP 404)") && m.text.contains("Nothing was changed"), "{}", m.text);
    assert_eq!(rows(&lazy), before);
    // Stale: once answered (or failed), the same id is dropped; so is an answer to a read that a
    // newer import replaced.
    lazy.apply(Action::Import(ImportAction::Answered { id, answer: Ok(a.clone()) }));
    assert_eq!(rows(&lazy), before);
    lazy.apply(paste(good, 5, (0, 0)));
    let (old, a) = answer(&lazy);
    lazy.apply(paste("1.\n11", 5, (0, 0)));
    assert_eq!(lazy.editor.reading, None);
    lazy.apply(Action::Import(ImportAction::Answered { id: old, answer: Ok(a) }));
    assert_eq!(rows(&lazy), ["1.", "11"]);
    lazy.apply(paste(good, 5, (0, 0)));
    let (id, a) = answer(&lazy);
    lazy.apply(Action::Import(ImportAction::Answered { id, answer: Ok(a[..a.len() / 2].to_string()) }));
    assert!(lazy.message.as_ref().unwrap().text.contains("the mask_mod reader's answer"));
    assert_eq!(rows(&lazy), ["1.", "11"]);
    // A .npy array and kernel parameters go the same way (the same module reads them), a
    // truncated array is refused in the linked importer's words, and a grid never waits.
    let npy = interop::write_npy(&BitMatrix::from_fn(5, |q, k| k == q || k == 0));
    let kernel = br#"{"kernel": "flash-attention", "causal": true, "window_size": [1, 0]}"#.to_vec();
    for (name, bytes) in [("m.npy", npy.clone()), ("k.json", kernel), ("bad.npy", npy[..npy.len() - 2].to_vec())] {
        let mut linked = state(BitMatrix::zeros(4));
        linked.apply(Action::Import(ImportAction::ImportFile { name: name.into(), bytes: bytes.clone() }));
        let mut lazy = state(BitMatrix::zeros(4));
        lazy.reader_linked = false;
        lazy.apply(Action::Import(ImportAction::ImportFile { name: name.into(), bytes }));
        assert!(lazy.message.as_ref().unwrap().text.contains("loading the reader…"), "{name}");
        let (id, a) = answer(&lazy);
        lazy.apply(Action::Import(ImportAction::Answered { id, answer: Ok(a) }));
        assert_eq!((rows(&lazy), lazy.editor.revision), (rows(&linked), linked.editor.revision), "{name}");
        let text = |s: &AppState| s.message.as_ref().map(|m| (m.level, m.text.clone()));
        assert_eq!(text(&lazy), text(&linked), "{name}");
    }
    let mut lazy = state(BitMatrix::zeros(4));
    lazy.reader_linked = false;
    lazy.apply(Action::Import(ImportAction::ImportFile { name: "g.txt".into(), bytes: b"1.\n11\n".to_vec() }));
    assert_eq!((lazy.editor.reading.as_ref(), rows(&lazy)), (None, vec!["1.".to_string(), "11".to_string()]));
}
