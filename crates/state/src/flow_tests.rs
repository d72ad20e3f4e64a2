//! Reducer tests of the Flow view ([`FlowAction`]): requests, keys, stale results, settings,
//! pictures, backends.

use hasseflow_core::format::parse_mask_file;

use super::test_support::*;
use super::*;

/// What the shell would send back for `req`: the CPU path's run, timed at 1 ms.
fn run_for(req: &FlowRequest) -> FlowRun {
    use hasseflow_core::flow::{FlowModel, FlowReport, cpu};
    let model = FlowModel::new(req.key.config, req.source.n()).expect("valid settings");
    let masks = req.source.masks(&req.key.config).expect("masks fit the model");
    let raw = cpu::run_flow(&model, &masks);
    let report = FlowReport::new(&raw, &masks);
    FlowRun { raw: Rc::new(raw), report, millis: 1.0, fallback: Some("no WebGPU adapter".into()), workers: 0 }
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
    assert_eq!(s.flow.run.dropped, 1);
    assert!(s.flow.current(s.flow_key()).is_none(), "the stale run is not current");
    s.apply(Action::Flow(FlowAction::Progress { key: req.key, progress: 0.9 }));
    assert_eq!(s.flow.run.dropped, 2, "late progress of the stale run is dropped too");
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
fn threshold_and_context_errors_are_typed_and_say_what_is_wrong() {
    assert_eq!(check_threshold(0.5), Ok(()));
    assert_eq!(check_threshold(1.0), Err(ThresholdError(1.0)));
    assert!(check_threshold(f64::NAN).unwrap_err().to_string().contains("strictly between 0 and 1"));
    assert!(ContextError::TooLong(1 << 21).to_string().contains("hasseflow model --context 2097152"));
    let mut s = state(BitMatrix::zeros(3));
    s.apply(Action::Models(ModelsAction::SetContext {
        n: "12x".into(),
        docs: String::new(),
        encoder: String::new(),
        images: String::new(),
    }));
    let m = s.message.as_ref().expect("refused");
    assert_eq!(m.text, "the context length \"12x\" is not a whole number. Nothing was changed.");
}
