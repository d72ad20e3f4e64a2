//! Reducer tests of the designer ([`DesignerAction`]): derivations, the derived mask, links
//! and the autosaved family.

use hasseflow_core::interop::ExportKind;

use super::test_support::*;
use super::*;
use hasseflow_core::derive::{
    Aggregate, AutoregressiveOptions, BlockOptions, BuiltinFamily, ButterflyOptions, MaeOptions, derive, wire,
};
use hasseflow_core::presets::{Inner, TwoStreamOrder};
use hasseflow_core::share;

fn block(o: BlockOptions) -> FamilySpec {
    FamilySpec::Builtin(BuiltinFamily::Block(o))
}

fn butterfly(o: ButterflyOptions) -> FamilySpec {
    FamilySpec::Builtin(BuiltinFamily::Butterfly(o))
}

/// What the Designer's export downloads: the answer to its request, here with the pipeline linked.
fn exported(d: &Design) -> String {
    let request: wire::Request = serde_json::from_str(&d.export_request()).expect("a request");
    assert!(request.json, "the export asks for the JSON object");
    request.json_here().expect("linked").expect("derives")
}

/// The core's own derivation of a built-in family.
fn derivation(b: BuiltinFamily) -> hasseflow_core::derive::Derivation {
    derive(&b.build().expect("builds")).expect("derives")
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
    let r = &d.view.report;
    assert_eq!((r.nodes_before, r.nodes_after), (10, 4));
    assert_eq!(d.dense().to_row_strings(), ["1...", "11..", "111.", "1111"]);
    // w_1..w_4 of w_0..w_4 are targets; each of the 4 positions predicts the next token.
    assert_eq!((r.target_tokens, r.sample_tokens, r.supervision_density), (4, 5, 0.8));
    assert_eq!(r.loss_position_share, 1.0);
    // The first node serves every task; the last only the longest.
    assert_eq!(d.view.served[0], [0, 1, 2, 3]);
    assert_eq!(d.view.served[3], [3]);
    assert_eq!(d.served_text(0), "all 4 tasks");
    assert_eq!(d.served_text(3), d.task_short(3));
    let params = BTreeMap::from([("s".to_string(), "2".to_string())]);
    let two_stream = build_preset("block-two-stream", 6, &params, MAX_EDIT_N).unwrap();
    let d = derived(&mut s, block(BlockOptions::new(6, 2)));
    assert_eq!(*d.dense(), two_stream);
    let bf = build_preset("butterfly", 4, &BTreeMap::new(), MAX_EDIT_N).unwrap();
    let d = derived(&mut s, butterfly(ButterflyOptions::new(4)));
    assert_eq!(*d.dense(), bf);
    let r = &d.view.report;
    assert_eq!((r.nodes_before, r.nodes_after), (16, 10));
    assert!(r.leaks.is_empty());
    assert!(exported(&d).contains("\"sparse_mask\""));
    // The exported object is the core's (the one `hasseflow derive --json` prints), with the
    // paper's supervision density (4 of 4 tokens) and the loss position share (4 of 12 positions).
    let v: serde_json::Value = serde_json::from_str(&exported(&d)).expect("JSON");
    assert_eq!(v, derivation(BuiltinFamily::Butterfly(ButterflyOptions::new(4))).to_json());
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
    assert!(d.view.report.leaks.is_empty());
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
    assert_eq!(s.editor.doc.labels.as_ref().unwrap()[0], d.view.positions[0]);
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
        derived(&mut s, spec.clone());
        s.apply(Action::Designer(DesignerAction::OpenDerived));
        assert_eq!(s.view, View::Editor);
        let p =
            s.editor.doc.provenance.clone().unwrap_or_else(|| panic!("{} opened without provenance", spec.describe()));
        assert_eq!((p.preset.as_str(), p.n), (preset, n));
        assert_eq!(serde_json::to_value(&p.params).unwrap(), params);
        // The same file the CLI writes: the core's mask file of the derivation, labels included.
        let FamilySpec::Builtin(b) = &spec else { unreachable!() };
        let cli = b.mask_file(&derivation(*b), false);
        assert_eq!(
            (s.editor.doc.provenance.as_ref(), s.editor.doc.labels.as_deref().map(Vec::as_slice)),
            (cli.provenance.as_ref(), cli.labels.as_deref())
        );
        let labels = s.editor.doc.labels.clone().unwrap_or_default();
        assert_eq!((labels.len(), labels[at].as_str()), (s.n(), label));
        let flex = String::from_utf8(s.export_bytes(ExportKind::Flex).expect("linked").unwrap()).unwrap();
        assert!(flex.contains(&format!("# Closed form of preset '{preset}'")), "{flex}");
        assert!(!flex.contains("return MASK[q_idx, kv_idx]"), "{flex}");
    }
    // MAE reproduces no preset: labels, no provenance, the lookup form.
    let mut s = state(BitMatrix::zeros(3));
    derived(&mut s, FamilySpec::Builtin(BuiltinFamily::Mae(MaeOptions::new(6, 2))));
    s.apply(Action::Designer(DesignerAction::OpenDerived));
    assert!(s.editor.doc.provenance.is_none() && s.editor.doc.labels.is_some());
    assert!(
        String::from_utf8(s.export_bytes(ExportKind::Flex).expect("linked").unwrap())
            .unwrap()
            .contains("return MASK[q_idx, kv_idx]")
    );
}

#[test]
fn family_files_derive_and_bad_ones_change_nothing() {
    let mut s = state(BitMatrix::zeros(3));
    let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/family_example.json")).unwrap();
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
    let file = include_bytes!("../../../tests/data/family_example.json").to_vec();
    s.apply(Action::Designer(DesignerAction::Derive(FamilySpec::File {
        name: "family_example.json".into(),
        bytes: file,
    })));
    assert!(s.designer.design.as_ref().is_some_and(|d| matches!(d.spec, FamilySpec::File { .. })), "{:?}", s.message);
    assert_eq!(s.design_fragment(), Err(LinkError::FamilyFile));
    assert!(LinkError::FamilyFile.to_string().contains("shared as the file"));
}

/// Without the pipeline linked in (the web app's first download), a derivation waits for the
/// lazily loaded module; its answer gives the design the linked pipeline gives. The shell is
/// asked only while the Designer is shown; a stale answer, a module that did not load and a
/// damaged answer change nothing.
#[test]
fn a_design_waits_for_the_lazy_module_and_its_answer_is_the_linked_design() {
    let spec = butterfly(ButterflyOptions::new(5));
    let mut linked = state(BitMatrix::zeros(2));
    let want = derived(&mut linked, spec.clone());
    let mut s = state(BitMatrix::zeros(2));
    s.designer.linked = false;
    s.apply(Action::Designer(DesignerAction::Restore(spec.to_json().expect("savable"))));
    assert!(s.design_request().is_none(), "nothing is asked before the Designer opens");
    s.apply(Action::View(ViewAction::SetView(View::Designer)));
    assert!(s.designer.design.is_none(), "waits for the module");
    let pending = s.design_request().expect("asked while the Designer is shown");
    assert_eq!(pending.spec, spec);
    s.apply(Action::View(ViewAction::SetView(View::Editor)));
    assert!(s.design_request().is_none() && s.designer.deriving.is_some(), "kept, not asked, elsewhere");
    s.apply(Action::View(ViewAction::SetView(View::Designer)));
    // A stale answer is dropped.
    let answer = wire::answer(&pending.request);
    s.apply(Action::Designer(DesignerAction::Answered { id: pending.id + 1, answer: Ok(answer.clone()) }));
    assert!(s.designer.design.is_none() && s.designer.deriving.is_some());
    s.apply(Action::Designer(DesignerAction::Answered { id: pending.id, answer: Ok(answer) }));
    let got = s.designer.design.clone().expect("derived from the answer");
    assert!(s.designer.deriving.is_none());
    assert_eq!(
        (&got.spec, got.dense(), &got.view.members, &got.view.tasks),
        (&spec, want.dense(), &want.view.members, &want.view.tasks)
    );
    assert_eq!((&got.view.served, &got.link), (&want.view.served, &want.link));
    assert_eq!(s.message.as_ref().map(|m| m.text.clone()), linked.message.as_ref().map(|m| m.text.clone()));
    assert_eq!(s.designer.seq, 1);
    // A module that did not load, or a damaged answer: one line, the last design stays.
    let other = butterfly(ButterflyOptions::new(3));
    for answer in [Err("offline".to_string()), Ok("{\"View\": 3}".to_string())] {
        s.apply(Action::Designer(DesignerAction::Derive(other.clone())));
        let id = s.design_request().expect("asked").id;
        s.apply(Action::Designer(DesignerAction::Answered { id, answer }));
        let m = s.message.clone().expect("a message");
        assert_eq!(m.level, Level::Error);
        assert!(m.text.starts_with("could not derive butterfly n=3") && !m.text.contains('\n'), "{}", m.text);
        assert!(s.designer.design.as_ref().is_some_and(|d| Rc::ptr_eq(d, &got)), "the last design stays");
        assert!(s.designer.deriving.is_none());
    }
    // Too large is refused before anything is asked.
    s.apply(Action::Designer(DesignerAction::Derive(butterfly(ButterflyOptions::new(MAX_DESIGN_N + 1)))));
    assert!(s.designer.deriving.is_none() && s.message.as_ref().is_some_and(|m| m.text.contains("handles n up to")));
    // Open in editor takes the answer's mask file: labels and provenance as the CLI writes them.
    s.apply(Action::Designer(DesignerAction::OpenDerived));
    let cli = match &spec {
        FamilySpec::Builtin(b) => b.mask_file(&derivation(*b), false),
        FamilySpec::File { .. } => unreachable!(),
    };
    let labels = s.editor.doc.labels.as_deref().map(Vec::as_slice);
    assert_eq!(
        (&*s.editor.doc.mask, labels, &s.editor.doc.provenance),
        (&cli.mask, cli.labels.as_deref(), &cli.provenance)
    );
}
