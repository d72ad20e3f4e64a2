//! wasm-bindgen tests that run inside headless Chromium (`cargo test --target
//! wasm32-unknown-unknown -p hasseflow-app`, runner `wasm-bindgen-test-runner`, see
//! .cargo/config.toml and webdriver.json): the store compiled to wasm with the browser's clock, and
//! the `<App>` component mounted into a real DOM. Natively this file is empty.
#![cfg(target_arch = "wasm32")]

use hasseflow_app::state::{Action, AppState, Document, EditAction, ImportAction};
use hasseflow_core::BitMatrix;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

fn now() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}

#[wasm_bindgen_test]
fn reducer_paints_a_causal_mask_in_wasm() {
    let mut state = AppState::new(Document::new(BitMatrix::zeros(4)), now);
    for q in 0..4 {
        state.apply(Action::Edit(EditAction::StrokeStart(q, 0)));
        for k in 1..=q {
            state.apply(Action::Edit(EditAction::StrokeMove(q, k)));
        }
        state.apply(Action::Edit(EditAction::StrokeEnd));
    }
    assert_eq!(*state.editor.doc.mask, BitMatrix::from_fn(4, |q, k| k <= q));
    assert_eq!(state.editor.derived.analysis.depth(), 1);
    assert!(state.editor.derived.millis >= 0.0, "timed by the browser's clock");
    // Undo removes the last stroke (row 3), redo restores it.
    state.apply(Action::Edit(EditAction::Undo));
    assert_eq!(state.editor.doc.mask.row_count(3), 0);
    state.apply(Action::Edit(EditAction::Redo));
    assert_eq!(state.editor.doc.mask.row_count(3), 4);
}

#[wasm_bindgen_test]
fn reducer_refuses_bad_json_in_wasm_and_keeps_the_mask() {
    let mut state = AppState::new(Document::new(BitMatrix::from_fn(3, |q, k| k <= q)), now);
    let before = state.editor.doc.mask.clone();
    state.apply(Action::Import(ImportAction::ImportFile {
        name: "bad.json".into(),
        bytes: b"{\"format\": oops".to_vec(),
    }));
    assert_eq!(state.editor.doc.mask, before);
    let message = state.message.as_ref().expect("a message explains the refusal");
    assert!(message.text.contains("malformed JSON"), "{}", message.text);
}

#[wasm_bindgen_test]
fn flow_attention_on_wasm_simd_is_bit_identical_to_key_by_key() {
    // The CPU flow's attention scores 64 keys at a time in wasm's 128-bit lanes (crates/engine's
    // flow::lanes); natively the same test runs on plain arrays. Both against the one-key loop.
    let paths = hasseflow_core::flow::cpu::attention_matches_key_by_key(300, 31).unwrap_or_else(|e| panic!("{e}"));
    assert!(paths.iter().all(|&p| p > 50), "every path is exercised: {paths:?}");
}

/// Waits (yielding to the browser) until `selector` matches an element, up to ~5 s.
async fn wait_for(selector: &str) -> web_sys::Element {
    let document = web_sys::window().and_then(|w| w.document()).expect("a document");
    for _ in 0..500 {
        if let Ok(Some(el)) = document.query_selector(selector) {
            return el;
        }
        gloo_timers::future::TimeoutFuture::new(10).await;
    }
    panic!("{selector} never appeared");
}

#[wasm_bindgen_test]
async fn app_component_mounts_and_shows_the_analysis() {
    let document = web_sys::window().and_then(|w| w.document()).expect("a document");
    let root = document.create_element("div").expect("div");
    document.body().expect("body").append_child(&root).expect("append");
    yew::Renderer::<hasseflow_app::ui::App>::with_root(root).render();
    let stats = wait_for("#stats").await;
    let text = stats.text_content().unwrap_or_default();
    assert!(text.contains("L*"), "stats list L*: {text}");
    wait_for("canvas#grid").await;
    let svg = wait_for("svg#hasse").await;
    // The initial causal mask: a chain, so the diagram has at least one node per position.
    assert!(svg.query_selector_all("g, rect").map(|l| l.length()).unwrap_or(0) > 0);
}

/// The WGSL kernels through the browser's WebGPU (Chromium's SwiftShader adapter under
/// `--enable-unsafe-webgpu`, which webdriver.json passes): the same numbers as the CPU path, and
/// influence support equal to R(L). No adapter is a failure, never a skip.
#[wasm_bindgen_test]
async fn webgpu_kernels_match_the_cpu_path_in_chromium() {
    use hasseflow_core::flow::{FlowConfig, FlowMasks, FlowModel, FlowReport, cpu};
    let gpu = match hasseflow_gpu::GpuFlow::new().await {
        Ok(g) => g,
        Err(e) => panic!(
            "NO WEBGPU ADAPTER in this Chromium ({e}). The browser tests need `--enable-unsafe-webgpu` \
             (webdriver.json) so that Chromium offers its SwiftShader adapter."
        ),
    };
    let info = gpu.backend_info();
    assert_eq!(info.kind, hasseflow_core::flow::BackendKind::Gpu);
    assert!(info.api.as_deref().is_some_and(|a| a.to_lowercase().contains("webgpu")), "{info:?}");
    let config = FlowConfig { d_model: 16, heads: 2, layers: 3, seed: 7 };
    // A sliding window (2 hops to converge on 9 positions in 3 layers) with an empty row.
    let mut mask = BitMatrix::from_fn(9, |q, k| q >= k && q - k < 3);
    for k in 0..9 {
        mask.set(4, k, false);
    }
    let model = FlowModel::new(config, 9).expect("valid");
    let masks = FlowMasks::uniform(&mask, &config);
    let g = gpu.run(&model, &masks).await.expect("the kernels run on WebGPU");
    let c = cpu::run_flow(&model, &masks);
    let max_diff = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0f32, f32::max);
    assert!(g.output.iter().all(|x| x.is_finite()), "the empty row stays finite");
    assert!(max_diff(&g.output, &c.output) <= 1e-3, "final states differ by {}", max_diff(&g.output, &c.output));
    for (l, (gi, ci)) in g.influence.iter().zip(&c.influence).enumerate() {
        let scale = ci.iter().fold(0f32, |m, &x| m.max(x)).max(f32::MIN_POSITIVE);
        let d = max_diff(gi, ci) / scale;
        assert!(d <= 1e-3, "layer {}: influence differs by {d} (relative)", l + 1);
    }
    let report = FlowReport::new(&g, &masks);
    assert!(report.exact(), "{:?}", report.layers);
}
