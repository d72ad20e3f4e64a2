//! Reducer tests of the Models view, natively: requests, keys, stale results, refusals, zoom,
//! the heatmap's shading and the scaled copy.

use std::rc::Rc;

use hasseflow_core::BitMatrix;
use hasseflow_core::job::Job;
use hasseflow_core::model::{ModelJob, ModelRun};
use hasseflow_core::pattern::Overlays;

use super::test_support::clock;
use super::*;

fn state() -> AppState {
    AppState::new(Document::new(BitMatrix::identity(4)), clock)
}

/// What the shell does for a request: the core's job run to its end.
fn run(req: &ModelRequest) -> Rc<ModelRun> {
    let stack =
        ModelRun::stack(&req.spec, req.n, &req.overlays, req.queries.len(), hasseflow_core::model::MAX_RUN_BYTES)
            .unwrap();
    let job = ModelJob::new(&stack, req.source.clone(), (*req.spec).clone(), req.n, req.overlays.clone(), &req.queries);
    Rc::new(job.unwrap().run().unwrap())
}

fn finish(s: &mut AppState) -> ModelRequest {
    let req = s.model_request().expect("a run is wanted");
    s.apply(Action::Models(ModelsAction::Finished { key: req.key, run: run(&req), millis: 1.0 }));
    req
}

fn context(s: &mut AppState, n: &str, docs: &str) {
    s.apply(Action::Models(ModelsAction::SetContext {
        n: n.into(),
        docs: docs.into(),
        encoder: String::new(),
        images: String::new(),
    }));
}

#[test]
fn runs_are_requested_only_in_the_models_view_until_they_finish() {
    let mut s = state();
    assert!(s.model_request().is_none());
    s.apply(Action::View(ViewAction::SetView(View::Models)));
    let req = s.model_request().unwrap();
    assert_eq!(req.n, DEFAULT_MODEL_N);
    assert_eq!(req.queries.len(), HEAT_CELLS);
    finish(&mut s);
    assert!(s.model_request().is_none());
    assert!(s.models.up_to_date());
    s.apply(Action::View(ViewAction::SetView(View::Editor)));
    assert!(s.model_request().is_none());
}

#[test]
fn mistral_at_131072_is_31_positions_short_like_the_cli() {
    let mut s = state();
    s.apply(Action::View(ViewAction::SetView(View::Models)));
    s.apply(Action::Models(ModelsAction::Select("mistral-7b-v0.1".into())));
    context(&mut s, "131,072", "");
    finish(&mut s);
    let o = s.models.current().unwrap();
    assert_eq!(o.run.verdict(), "31 of 131072 positions short at the last layer (496 cells missing)");
    assert_eq!(o.run.report.growth[1], 528_484_352);
    assert!(!o.run.leaks());
    // The export is the CLI's object.
    let v: serde_json::Value = serde_json::from_str(&o.to_json()).unwrap();
    assert_eq!(v["n"], 131072);
    assert_eq!(v["layers"], 32);
    assert!(v["timings_ms"]["reach"].is_number());
}

#[test]
fn a_late_result_for_an_old_key_is_dropped() {
    let mut s = state();
    s.apply(Action::View(ViewAction::SetView(View::Models)));
    let old = s.model_request().unwrap();
    // The user changes the context while the run is going: its progress and result are stale.
    context(&mut s, "4096", "");
    let fresh = s.model_request().unwrap();
    assert_ne!(old.key, fresh.key);
    s.apply(Action::Models(ModelsAction::Progress { key: old.key, done: 3, total: 32 }));
    s.apply(Action::Models(ModelsAction::Finished { key: old.key, run: run(&old), millis: 1.0 }));
    s.apply(Action::Models(ModelsAction::Failed { key: old.key, error: "late".into() }));
    assert_eq!(s.models.run.dropped, 3);
    assert!(s.models.outcome.is_none());
    assert_eq!(s.models.status_now(), ModelStatus::Idle);
    s.apply(Action::Models(ModelsAction::Progress { key: fresh.key, done: 2, total: 32 }));
    assert_eq!(s.models.status_now(), ModelStatus::Running { done: 2, total: 32 });
    s.apply(Action::Models(ModelsAction::Finished { key: fresh.key, run: run(&fresh), millis: 1.0 }));
    assert_eq!(s.models.current().unwrap().run.n, 4096);
    assert_eq!(s.models.status_now(), ModelStatus::Idle);
    // The same settings again start no run.
    context(&mut s, "4096", "");
    assert!(s.model_request().is_none());
}

#[test]
fn a_failed_run_waits_for_retry() {
    let mut s = state();
    s.apply(Action::View(ViewAction::SetView(View::Models)));
    let req = s.model_request().unwrap();
    s.apply(Action::Models(ModelsAction::Failed { key: req.key, error: "out of memory".into() }));
    assert!(s.model_request().is_none());
    assert_eq!(s.models.status_now(), ModelStatus::Failed("out of memory".into()));
    s.apply(Action::Models(ModelsAction::Retry));
    assert_eq!(s.model_request().unwrap().key, req.key);
}

#[test]
fn bad_configs_and_contexts_change_nothing() {
    let mut s = state();
    s.apply(Action::View(ViewAction::SetView(View::Models)));
    finish(&mut s);
    let before = (s.models.clone(), s.editor.revision);
    let bad: [&[u8]; 4] = [b"{not json", br#"{"model_type": "no-such-model"}"#, b"\xff\xfe", &[b' '; 2 << 20]];
    for bytes in bad {
        s.apply(Action::Models(ModelsAction::LoadConfig { name: "config.json".into(), bytes: bytes.to_vec() }));
        assert_eq!(s.message.as_ref().unwrap().level, Level::Error);
        assert!(s.message.as_ref().unwrap().text.contains("The current model stays"), "{:?}", s.message);
        assert_eq!((s.models.clone(), s.editor.revision), before);
    }
    let msg = |s: &AppState| s.message.as_ref().unwrap().text.clone();
    s.apply(Action::Models(ModelsAction::LoadConfig {
        name: "config.json".into(),
        bytes: br#"{"model_type": "foo"}"#.to_vec(),
    }));
    assert!(msg(&s).contains("model_type: unknown model type \"foo\""), "{}", msg(&s));
    for (n, docs, says) in [
        ("0", "", "at least 1"),
        ("2097152", "", "more than the 1048576"),
        ("abc", "", "not a whole number"),
        ("1024", "512,500", "sum to 1012"),
        ("1024", "512,x", "not a positive integer"),
    ] {
        context(&mut s, n, docs);
        assert!(msg(&s).contains(says), "{n} {docs}: {}", msg(&s));
        assert_eq!(s.models, before.0);
    }
    assert!(s.model_request().is_none());
}

/// A context whose run is over the core's memory limit (1 GiB in the browser, 8 GiB natively) is
/// refused by the run's own check before anything changes: here a million one-token documents
/// over 4096 layers, which each layer keeps (about 32 GiB). The run itself checks the same
/// (`ModelRun::stack`, which `run` above calls like the shell).
#[test]
fn a_context_over_the_memory_limit_changes_nothing() {
    let mut s = state();
    s.apply(Action::View(ViewAction::SetView(View::Models)));
    let cfg = br#"{"model_type": "llama", "num_hidden_layers": 4096}"#;
    s.apply(Action::Models(ModelsAction::LoadConfig { name: "deep.json".into(), bytes: cfg.to_vec() }));
    finish(&mut s);
    let before = (s.models.clone(), s.editor.revision);
    let docs = vec!["1"; 1 << 20].join(",");
    context(&mut s, "1048576", &docs);
    let text = s.message.as_ref().unwrap().text.clone();
    assert!(text.starts_with("context 1048576: the reach run would need about 32."), "{text}");
    assert!(
        text.contains("1048576 documents over 4096 layers do not fit") && text.ends_with("Nothing was changed."),
        "{text}"
    );
    assert_eq!((s.models.clone(), s.editor.revision), before);
    assert!(s.model_request().is_none());
    let e = ModelRun::stack(
        &s.models.choice.spec,
        1 << 20,
        &Overlays { docs: vec![1; 1 << 20], ..Overlays::default() },
        256,
        1 << 30,
    )
    .err()
    .map(|e| e.to_string());
    assert!(e.is_some_and(|e| e.contains("more than the 1.0 GiB limit")));
}

#[test]
fn a_config_file_replaces_the_model_and_documents_are_kept_in_the_run() {
    let mut s = state();
    s.apply(Action::View(ViewAction::SetView(View::Models)));
    let cfg = br#"{"model_type": "mistral", "num_hidden_layers": 4, "sliding_window": 16}"#;
    s.apply(Action::Models(ModelsAction::LoadConfig { name: "my-config.json".into(), bytes: cfg.to_vec() }));
    assert_eq!(s.message.as_ref().unwrap().level, Level::Info);
    assert_eq!(s.models.choice.gallery, None);
    assert_eq!(s.models.choice.spec.layers.len(), 4);
    context(&mut s, "1 048 576", "524288, 524288");
    assert_eq!((s.models.n, s.models.docs.clone()), (1 << 20, vec![524_288, 524_288]));
    let req = finish(&mut s);
    assert_eq!(req.overlays.docs, vec![524_288, 524_288]);
    let o = s.models.current().unwrap();
    assert_eq!(o.run.source, "my-config.json");
    assert!(!o.run.leaks());
}

#[test]
fn zoom_requests_the_rows_of_the_visible_range_and_keeps_the_report_meanwhile() {
    let mut s = state();
    s.apply(Action::View(ViewAction::SetView(View::Models)));
    context(&mut s, "65536", "");
    finish(&mut s);
    s.apply(Action::Models(ModelsAction::Zoom { factor: 4.0, fq: 1.0, fk: 1.0 }));
    let v = s.models.view;
    assert_eq!((v.q0, v.q1, v.k0, v.k1), (49152, 65535, 49152, 65535));
    let req = s.model_request().unwrap();
    assert!(req.queries.iter().all(|&q| (49152..=65535).contains(&q)));
    // The report of the same settings stays shown while the new rows are computed.
    assert!(s.models.current().is_some() && !s.models.up_to_date());
    s.apply(Action::Models(ModelsAction::Finished { key: req.key, run: run(&req), millis: 1.0 }));
    assert!(s.models.up_to_date());
    // Zooming far in stops at one position; out, at everything.
    for _ in 0..40 {
        s.apply(Action::Models(ModelsAction::Zoom { factor: 2.0, fq: 0.5, fk: 0.5 }));
    }
    assert_eq!(s.models.view.q1, s.models.view.q0);
    assert_eq!(s.models.view.rows(), 1);
    for _ in 0..40 {
        s.apply(Action::Models(ModelsAction::Zoom { factor: 0.5, fq: 0.2, fk: 0.7 }));
    }
    assert!(s.models.view.is_whole(65536));
    s.apply(Action::Models(ModelsAction::Zoom { factor: 3.0, fq: 0.0, fk: 0.0 }));
    s.apply(Action::Models(ModelsAction::ResetZoom));
    assert!(s.models.view.is_whole(65536));
    // A new context shows everything again.
    s.apply(Action::Models(ModelsAction::Zoom { factor: 3.0, fq: 0.0, fk: 0.0 }));
    context(&mut s, "1000", "");
    assert!(s.models.view.is_whole(1000));
}

#[test]
fn a_zoom_by_an_unusable_factor_changes_nothing() {
    let mut s = state();
    s.apply(Action::View(ViewAction::SetView(View::Models)));
    context(&mut s, "4096", "");
    s.apply(Action::Models(ModelsAction::Zoom { factor: 4.0, fq: 0.5, fk: 0.5 }));
    let before = s.models.view;
    assert!(!before.is_whole(4096));
    for factor in [0.0, -2.0, f64::NAN, f64::INFINITY] {
        s.apply(Action::Models(ModelsAction::Zoom { factor, fq: 0.5, fk: 0.5 }));
        assert_eq!(s.models.view, before, "zoom by {factor}");
    }
    assert!(s.message.is_none());
}

#[test]
fn the_heatmap_shades_the_covered_share_of_each_cell() {
    let mut s = state();
    s.apply(Action::View(ViewAction::SetView(View::Models)));
    s.apply(Action::Models(ModelsAction::Select("mistral-7b-v0.1".into())));
    // n = 512: one display cell per 2 keys and 2 queries; window 4096 covers everything causal.
    context(&mut s, "512", "");
    finish(&mut s);
    let pic = s.models.current().unwrap().heatmap(1);
    assert_eq!((pic.rows, pic.cols), (256, 256));
    // Row r shows query 2r + 1 (the middle of 2r..=2r+1): keys 0..=2r+1 are read.
    for r in [0usize, 10, 255] {
        for c in 0..256 {
            let want = if c <= r { 1.0 } else { 0.0 };
            assert_eq!(pic.fraction[r * 256 + c], want, "r {r} c {c}");
        }
    }
    // A window of 3 at n = 1024, 256 columns of 4 keys: query 2 (row 0) reads 0..=2 → 3/4.
    let cfg = br#"{"model_type": "mistral", "num_hidden_layers": 2, "sliding_window": 3}"#;
    s.apply(Action::Models(ModelsAction::LoadConfig { name: "w3.json".into(), bytes: cfg.to_vec() }));
    context(&mut s, "1024", "");
    finish(&mut s);
    let o = s.models.current().unwrap().clone();
    assert_eq!(o.key.view.queries()[0], 2);
    let pic = o.heatmap(1);
    assert_eq!(pic.fraction[0], 0.75);
    assert_eq!(pic.fraction[1], 0.0);
    // Layer 2 reads 0..=2 still for query 2 (window 3 twice: q - 4 < k, clipped at 0).
    assert_eq!(o.heatmap(2).fraction[0], 0.75);
    // Query 1022 (last row, middle of 1020..=1023) at layer 2 reads 1018..=1022: columns 254 (1016..1020) half, 255 three quarters.
    assert_eq!(o.key.view.queries()[255], 1022);
    let p2 = o.heatmap(2);
    assert_eq!(p2.fraction[255 * 256 + 254], 0.5);
    assert_eq!(p2.fraction[255 * 256 + 255], 0.75);
    s.apply(Action::Models(ModelsAction::SetLayer(99)));
    assert_eq!(s.models.layer, 2);
}

#[test]
fn the_scaled_copy_opens_in_the_editor_as_one_undo_step() {
    let mut s = state();
    s.apply(Action::View(ViewAction::SetView(View::Models)));
    s.apply(Action::Models(ModelsAction::Select("mistral-7b-v0.1".into())));
    context(&mut s, "131072", "");
    assert_eq!(s.models.scaled(512).unwrap().summary, "scaled 1:256: context 131072 → 512, window 4096 → 16");
    let before = s.editor.doc.clone();
    s.apply(Action::Models(ModelsAction::OpenScaled));
    assert_eq!(s.view, View::Editor);
    assert_eq!(s.n(), 512);
    let stack = s.editor.doc.stack.clone().expect("a layer stack");
    assert_eq!(stack.0.layers().len(), 32);
    assert_eq!(stack.0.n(), 512);
    // Window 16, causal: row 100 reads 85..=100.
    assert_eq!(s.editor.doc.mask.row_count(100), 16);
    assert!(s.editor.doc.mask.get(100, 85) && !s.editor.doc.mask.get(100, 84) && !s.editor.doc.mask.get(100, 101));
    assert!(s.message.as_ref().unwrap().text.contains("scaled 1:256"));
    s.apply(Action::Edit(EditAction::Undo));
    assert_eq!(s.editor.doc, before);
    // Too many documents to scale: refused, nothing changes.
    s.apply(Action::View(ViewAction::SetView(View::Models)));
    context(&mut s, "2048", &vec!["2"; 1024].join(","));
    let rev = s.editor.revision;
    s.apply(Action::Models(ModelsAction::OpenScaled));
    assert_eq!(s.message.as_ref().unwrap().level, Level::Error);
    assert_eq!((s.editor.revision, s.view), (rev, View::Models));
}

const T5: &[u8] = br#"{"model_type": "t5", "num_layers": 6, "num_decoder_layers": 4}"#;

fn encoder(s: &mut AppState, n: &str, encoder: &str) {
    s.apply(Action::Models(ModelsAction::SetContext {
        n: n.into(),
        docs: String::new(),
        encoder: encoder.into(),
        images: String::new(),
    }));
}

/// An encoder-decoder runs the CLI's positions (`ModelRun::positions`): the encoder's length
/// (default: the context) first, then the decoder's; the run equals `hasseflow model --context`.
#[test]
fn an_encoder_decoder_runs_encoder_then_decoder_positions_like_the_cli() {
    let mut s = state();
    s.apply(Action::View(ViewAction::SetView(View::Models)));
    s.apply(Action::Models(ModelsAction::LoadConfig { name: "t5.json".into(), bytes: T5.to_vec() }));
    assert!(s.message.as_ref().unwrap().text.contains("10 layers, encoder 6 x full_attention; decoder 4 x"));
    encoder(&mut s, "4096", "");
    assert_eq!((s.models.n, s.models.total, s.models.encoder_n), (4096, 8192, None));
    assert!(s.models.view.is_whole(8192));
    let req = finish(&mut s);
    assert_eq!((req.n, req.spec.encoder.as_ref().unwrap().context), (8192, 4096));
    let (spec, n) = ModelRun::positions((*s.models.choice.spec).clone(), 4096, None).unwrap();
    let cli = ModelRun::compute("t5.json".into(), spec, n, Overlays::default(), &[]).unwrap();
    let o = s.models.current().unwrap();
    assert_eq!(o.run.report.growth, cli.report.growth);
    assert_eq!(o.run.report.full_at, cli.report.full_at);
    assert_eq!(o.run.report.layers.len(), 10);
    assert_eq!(o.run.report.layers[0].label, "encoder full_attention");
    assert_eq!(o.run.report.layers[9].label, "decoder full_attention + cross-attention");
    assert_eq!(o.run.to_json()["encoder"]["context"], 4096);
    // The heatmap: the last display row is a decoder query, which reads nothing of the encoder in
    // an encoder layer and, from the first decoder layer on, every encoder key and its own past.
    let (first, seventh) = (o.heatmap(1), o.heatmap(7));
    let last = 255 * 256;
    assert_eq!(first.fraction[last], 0.0);
    assert!(seventh.fraction[last..last + 255].iter().all(|&f| f == 1.0));
    // An encoder length of its own; documents are not applied to an encoder-decoder.
    encoder(&mut s, "4096", "1000");
    assert_eq!((s.models.total, s.models.encoder_n), (5096, Some(1000)));
    s.apply(Action::Models(ModelsAction::SetContext {
        n: "4096".into(),
        docs: "2048,x".into(),
        encoder: "1000".into(),
        images: String::new(),
    }));
    assert!(s.models.docs.is_empty() && s.model_request().unwrap().overlays.docs.is_empty());
    for (e, says) in [
        ("0", "the encoder length must be at least 1"),
        ("x", "the encoder length \"x\" is not"),
        ("2000000", "an encoder length of 2000000 is more than the 1048576"),
    ] {
        let before = s.models.clone();
        encoder(&mut s, "4096", e);
        assert!(s.message.as_ref().unwrap().text.starts_with(says), "{e}: {:?}", s.message);
        assert_eq!(s.models, before);
    }
    s.apply(Action::Models(ModelsAction::SetLayer(99)));
    assert_eq!(s.models.layer, 10);
    // A refusal of the run says which positions its context counts.
    let said = run_error(&s.models.placed, s.models.total, &"context 5096: too much");
    assert_eq!(
        said,
        "context 5096: too much (an encoder-decoder's positions: the encoder's 1000 and the decoder's 4096 together)"
    );
    // The scaled copy keeps the encoder in front.
    let scaled = s.models.scaled(512).unwrap();
    // 5096 positions at 1:10: 510, the encoder's 1000 → 100 first.
    assert_eq!((scaled.factor, scaled.n, scaled.spec.encoder.as_ref().map(|e| e.context)), (10, 510, Some(100)));
    s.apply(Action::Models(ModelsAction::OpenScaled));
    assert_eq!((s.view, s.n()), (View::Editor, 510));
    // A decoder position reads every encoder position in its first (decoder) layer's closure.
    assert!(s.editor.doc.mask.get(100, 99) && s.editor.doc.mask.get(509, 0) && !s.editor.doc.mask.get(99, 100));
    // Documents set for a decoder are not applied to an encoder-decoder, and apply again after.
    s.apply(Action::View(ViewAction::SetView(View::Models)));
    s.apply(Action::Models(ModelsAction::Select("mistral-7b-v0.1".into())));
    s.apply(Action::Models(ModelsAction::SetContext {
        n: "4096".into(),
        docs: "2048,2048".into(),
        encoder: "1000".into(),
        images: String::new(),
    }));
    assert_eq!((s.models.total, s.model_request().unwrap().overlays.docs), (4096, vec![2048, 2048]));
    s.apply(Action::Models(ModelsAction::LoadConfig { name: "t5.json".into(), bytes: T5.to_vec() }));
    assert_eq!((s.models.total, s.model_request().unwrap().overlays.docs), (5096, vec![]));
    s.apply(Action::Models(ModelsAction::Select("mistral-7b-v0.1".into())));
    assert_eq!(s.model_request().unwrap().overlays.docs, [2048, 2048]);
}

fn images(s: &mut AppState, n: &str, docs: &str, images: &str) {
    s.apply(Action::Models(ModelsAction::SetContext {
        n: n.into(),
        docs: docs.into(),
        encoder: String::new(),
        images: images.into(),
    }));
}

/// The image field (`hasseflow model --images`): spans go into the run's overlays and its rows
/// (an image token reads its whole image ahead from the first layer on); a bad entry is refused
/// in one line and changes nothing; an empty field clears them; an encoder-decoder has none; the
/// scaled copy keeps them, scaled.
#[test]
fn image_spans_run_like_the_cli_and_a_bad_entry_changes_nothing() {
    let mut s = state();
    s.apply(Action::View(ViewAction::SetView(View::Models)));
    s.apply(Action::Models(ModelsAction::Select("gemma-3-27b-it".into())));
    images(&mut s, "4096", "2048,2048", "100:256, 3000:64");
    assert_eq!(s.models.images, vec![[100, 256], [3000, 64]]);
    let req = finish(&mut s);
    assert_eq!(req.overlays.images, vec![[100, 256], [3000, 64]]);
    assert_eq!(req.overlays.docs, vec![2048, 2048]);
    let cli = ModelRun::compute("g".into(), (*req.spec).clone(), 4096, req.overlays.clone(), &[112]).unwrap();
    let o = s.models.current().unwrap().clone();
    assert_eq!(o.run.report.growth, cli.report.growth);
    assert_eq!(cli.report.layers[0].query_rows[0].intervals, vec![[0, 355]]);
    let v: serde_json::Value = serde_json::from_str(&o.to_json()).unwrap();
    assert_eq!(v["images"], serde_json::json!([[100, 256], [3000, 64]]));
    let settings = s.models.settings;
    for (text, says) in [
        ("100:x", "images: entry 0 (\"100:x\") is not START:LEN"),
        ("4090:64", "images: span 4090:64 ends at 4154, past the context 4096"),
        ("10:20,20:5", "images: spans 10:20 and 20:5 overlap"),
        ("10:10,20:5", "images: spans 10:10 and 20:5 touch"),
        ("10:0", "images: span 10:0 has no tokens"),
    ] {
        let before = s.models.clone();
        images(&mut s, "4096", "2048,2048", text);
        let m = s.message.as_ref().unwrap();
        assert_eq!(m.level, Level::Error);
        assert!(
            m.text.starts_with(says) && m.text.ends_with("Nothing was changed.") && !m.text.contains('\n'),
            "{m:?}"
        );
        assert_eq!(s.models, before);
        assert!(s.model_request().is_none());
    }
    // A shorter context refuses spans past it, and keeps the old context too.
    images(&mut s, "2048", "", "100:256,3000:64");
    assert_eq!((s.models.n, s.models.settings), (4096, settings));
    // The scaled copy (4096 → 512, 1:8) keeps the images, scaled.
    assert_eq!(hasseflow_core::model::scale_image_spans(&s.models.images, 8, 512), vec![[12, 33], [375, 8]]);
    s.apply(Action::Models(ModelsAction::OpenScaled));
    assert!(s.message.as_ref().unwrap().text.contains(", 2 image spans: the grid shows"), "{:?}", s.message);
    // Position 12 is an image token: it reads position 44, the last of its image, in the union.
    assert!(s.editor.doc.mask.get(12, 44) && !s.editor.doc.mask.get(11, 44));
    // Clearing the field clears the spans; an encoder-decoder runs without them.
    s.apply(Action::View(ViewAction::SetView(View::Models)));
    images(&mut s, "4096", "", "");
    assert!(s.models.images.is_empty() && s.model_request().unwrap().overlays.images.is_empty());
    images(&mut s, "4096", "", "5:5");
    s.apply(Action::Models(ModelsAction::LoadConfig { name: "t5.json".into(), bytes: T5.to_vec() }));
    assert!(s.model_request().unwrap().overlays.images.is_empty());
    images(&mut s, "4096", "", "5:5");
    assert!(s.models.images.is_empty());
}

/// The web app's first download has no config reader: the first gallery model, a selection, a
/// config and a model link wait for the lazily loaded reader, which is asked only while the
/// Models view is shown; its answer (through `core::model::wire`) does exactly what the linked
/// reader does, and a failed load, a refusal, a stale or a damaged answer change nothing.
#[test]
fn a_model_waits_for_the_lazy_reader_and_its_answer_does_what_the_linked_reader_does() {
    use hasseflow_core::model::wire;
    use hasseflow_core::share::{ModelLink, encode_model};
    let lazy_state = || {
        let mut s = state();
        s.models = ModelsState::starting(false);
        s
    };
    let answer = |s: &AppState| {
        let r = s.model_read().expect("a read the shell asks for");
        (r.id, wire::answer(&r.request.to_json()))
    };
    let same = |lazy: &AppState, linked: &AppState| {
        let m = |s: &AppState| (s.models.choice.clone(), s.models.n, s.models.docs.clone(), s.models.layer, s.view);
        assert_eq!(m(lazy), m(linked));
        let text = |s: &AppState| s.message.as_ref().map(|m| (m.level, m.text.clone()));
        assert_eq!(text(lazy), text(linked));
    };
    let mut linked = state();
    let mut lazy = lazy_state();
    // Nothing is asked, and nothing runs, until the Models view is shown.
    assert!(lazy.model_read().is_none() && lazy.models.choice.spec.layers.is_empty());
    for s in [&mut linked, &mut lazy] {
        s.apply(Action::View(ViewAction::SetView(View::Models)));
    }
    assert!(lazy.model_request().is_none(), "no run before the model is read");
    let (id, a) = answer(&lazy);
    lazy.apply(Action::Models(ModelsAction::Answered { id, answer: Ok(a) }));
    assert_eq!(lazy.models.reading, None);
    assert_eq!(lazy.models.choice, linked.models.choice);
    assert_eq!(lazy.model_request().map(|r| (r.spec, r.n)), linked.model_request().map(|r| (r.spec, r.n)));
    // A selection, a config read and one refused, each as the linked reader does it.
    let config = br#"{"model_type": "gemma3_text", "num_hidden_layers": 7, "sliding_window": 16}"#.to_vec();
    let actions = [
        ModelsAction::Select("gpt2".into()),
        ModelsAction::LoadConfig { name: "my.json".into(), bytes: config },
        ModelsAction::LoadConfig { name: "bad.json".into(), bytes: br#"{"layer_types": ["warp"]}"#.to_vec() },
        ModelsAction::Select("modernbert-base".into()),
    ];
    for action in actions {
        linked.apply(Action::Models(action.clone()));
        lazy.apply(Action::Models(action.clone()));
        let (id, a) = answer(&lazy);
        lazy.apply(Action::Models(ModelsAction::Answered { id, answer: Ok(a) }));
        same(&lazy, &linked);
    }
    assert_eq!(lazy.models.choice.gallery, Some("modernbert-base"));
    // Refused before asking, in the reader's words: an unknown name, bytes that are not UTF-8.
    for action in [
        ModelsAction::Select("nope".into()),
        ModelsAction::LoadConfig { name: "x.json".into(), bytes: b"\xff".to_vec() },
    ] {
        linked.apply(Action::Models(action.clone()));
        lazy.apply(Action::Models(action));
        assert!(lazy.model_read().is_none());
        same(&lazy, &linked);
        assert_eq!(lazy.message.as_ref().map(|m| m.level), Some(Level::Error));
    }
    // A model link: its context and layer wait for the model, then apply as they do linked.
    let link = encode_model(&ModelLink {
        gallery: Some("gemma-3-1b-it".into()),
        n: 4096,
        documents: vec![1000, 3096],
        layer: Some(3),
        ..ModelLink::default()
    });
    linked.apply(Action::Import(ImportAction::LoadShared(link.clone())));
    lazy.apply(Action::Import(ImportAction::LoadShared(link)));
    assert_eq!(lazy.models.n, DEFAULT_MODEL_N, "the context waits for the model");
    let (id, a) = answer(&lazy);
    lazy.apply(Action::Models(ModelsAction::Answered { id, answer: Ok(a) }));
    same(&lazy, &linked);
    assert_eq!((lazy.models.n, lazy.models.docs.as_slice(), lazy.models.layer), (4096, &[1000, 3096][..], 3));
    // The reader fails to load, its answer is damaged, or stale: one line, nothing changed.
    let before = lazy.models.clone();
    lazy.apply(Action::Models(ModelsAction::Select("gpt2".into())));
    let (id, a) = answer(&lazy);
    lazy.apply(Action::Models(ModelsAction::Answered { id, answer: Err("HTTP 404".into()) }));
    let m = lazy.message.clone().expect("a message");
    assert_eq!(m.level, Level::Error);
    assert!(
        m.text.contains("the model reader did not load (HTTP 404)") && m.text.ends_with("Nothing was changed."),
        "{}",
        m.text
    );
    assert_eq!(lazy.models, before);
    lazy.apply(Action::Models(ModelsAction::Answered { id, answer: Ok(a.clone()) }));
    assert_eq!(lazy.models, before, "an answered read's id is stale");
    lazy.apply(Action::Models(ModelsAction::Select("gpt2".into())));
    let (id, _) = answer(&lazy);
    lazy.apply(Action::Models(ModelsAction::Answered { id, answer: Ok(a[..a.len() / 2].to_string()) }));
    assert!(lazy.message.as_ref().is_some_and(|m| m.text.contains("the model reader's answer")));
    assert_eq!(lazy.models, before);
}
