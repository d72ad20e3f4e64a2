//! The WGSL kernels against the core's CPU reference, on a real GPU API (lavapipe in CI).
//!
//! Every test needs an adapter and FAILS when none is found: a machine without one must install
//! mesa-vulkan-drivers (scripts/setup.sh does), not skip these tests silently.
//!
//! Tolerance: final states (unit scale after LayerNorm) and influences within `1e-3` absolute
//! (influences relative to the layer's largest), attention probabilities within `1e-4`.
//!
//! Native only (they block on the device); in the browser, tests/browser.rs of the app runs the
//! kernels through WebGPU.
#![cfg(not(target_arch = "wasm32"))]

use std::sync::OnceLock;

use hasseflow_core::flow::{BackendKind, FlowConfig, FlowMasks, FlowModel, FlowRaw, FlowReport, cpu};
use hasseflow_core::{BitMatrix, Layer, LayerStack};
use hasseflow_gpu::GpuFlow;

#[path = "../../core/tests/support/flow_masks.rs"]
mod flow_masks;

use flow_masks::{assert_exact, catalog_masks, preset};

const STATE_TOLERANCE: f32 = 1e-3;
const INFLUENCE_TOLERANCE: f32 = 1e-3;
const ATTENTION_TOLERANCE: f32 = 1e-4;

fn gpu() -> &'static GpuFlow {
    static GPU: OnceLock<GpuFlow> = OnceLock::new();
    GPU.get_or_init(|| {
        GpuFlow::new_blocking().unwrap_or_else(|e| {
            panic!(
                "NO GPU ADAPTER: {e}. These tests must run on a GPU API; install mesa-vulkan-drivers \
                 (lavapipe), e.g. via scripts/setup.sh"
            )
        })
    })
}

fn run_both(mask_or_stack: &FlowMasks, config: FlowConfig) -> (FlowRaw, FlowRaw) {
    let model = FlowModel::new(config, mask_or_stack.n()).expect("valid config");
    let cpu_raw = cpu::run_flow(&model, mask_or_stack);
    let gpu_raw = gpu().run_blocking(&model, mask_or_stack).expect("GPU run");
    (cpu_raw, gpu_raw)
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).fold(0f32, |m, (x, y)| m.max((x - y).abs()))
}

fn assert_close(name: &str, c: &FlowRaw, g: &FlowRaw) {
    assert!(g.output.iter().all(|x| x.is_finite()), "{name}: GPU output not finite");
    let out = max_abs_diff(&c.output, &g.output);
    assert!(out <= STATE_TOLERANCE, "{name}: final states differ by {out}");
    for (l, (ci, gi)) in c.influence.iter().zip(&g.influence).enumerate() {
        let max = ci.iter().fold(0f32, |m, &x| m.max(x)).max(f32::MIN_POSITIVE);
        let diff = max_abs_diff(ci, gi) / max;
        assert!(diff <= INFLUENCE_TOLERANCE, "{name}: layer {} influence differs by {diff} (relative)", l + 1);
    }
    for (l, (ca, ga)) in c.attention.iter().zip(&g.attention).enumerate() {
        let diff = max_abs_diff(ca, ga);
        assert!(diff <= ATTENTION_TOLERANCE, "{name}: layer {} attention differs by {diff}", l + 1);
    }
}

#[test]
fn gpu_reports_its_adapter() {
    let g = gpu();
    let info = g.backend_info();
    assert_eq!(info.kind, BackendKind::Gpu);
    assert!(!g.adapter().name.is_empty());
    eprintln!("adapter: {:?}", g.adapter());
}

#[test]
fn gpu_matches_cpu_within_tolerance_on_several_masks_and_sizes() {
    let cases = [
        ("causal n=16 d=16 h=1", preset("causal", 16, &[]), FlowConfig { d_model: 16, heads: 1, layers: 2, seed: 0 }),
        (
            "window n=40 d=32 h=4",
            preset("sliding-window", 40, &[("w", "4")]),
            FlowConfig { d_model: 32, heads: 4, layers: 5, seed: 2 },
        ),
        (
            "random n=70 d=64 h=8",
            preset("random", 70, &[("p", "0.2"), ("seed", "1")]),
            FlowConfig { d_model: 64, heads: 8, layers: 3, seed: 7 },
        ),
        ("full n=33 d=128 h=2", preset("full", 33, &[]), FlowConfig { d_model: 128, heads: 2, layers: 2, seed: 3 }),
        (
            "butterfly n=12 d=48 h=3",
            preset("butterfly", 12, &[]),
            FlowConfig { d_model: 48, heads: 3, layers: 4, seed: 11 },
        ),
    ];
    for (name, mask, config) in cases {
        let masks = FlowMasks::uniform(&mask, &config);
        let (c, g) = run_both(&masks, config);
        assert_close(name, &c, &g);
    }
}

#[test]
fn gpu_influence_support_equals_reach_on_catalog_masks() {
    let config = FlowConfig { d_model: 32, heads: 4, layers: 6, seed: 1 };
    for (name, mask) in catalog_masks() {
        let masks = FlowMasks::uniform(&mask, &config);
        let model = FlowModel::new(config, mask.n()).expect("valid");
        let raw = gpu().run_blocking(&model, &masks).expect("GPU run");
        assert_eq!(raw.backend.kind, BackendKind::Gpu);
        assert_exact(&name, &FlowReport::new(&raw, &masks));
    }
}

#[test]
fn gpu_fully_masked_rows_stay_finite() {
    let mut mask = preset("causal", 10, &[]);
    for k in 0..10 {
        mask.set(0, k, false);
        mask.set(6, k, false);
    }
    for m in [mask, BitMatrix::zeros(7)] {
        let config = FlowConfig { layers: 3, ..FlowConfig::default() };
        let masks = FlowMasks::uniform(&m, &config);
        let (c, g) = run_both(&masks, config);
        assert!(g.influence.iter().flatten().chain(g.attention.iter().flatten()).all(|x| x.is_finite()));
        assert_close("masked rows", &c, &g);
        assert_exact("masked rows", &FlowReport::new(&g, &masks));
    }
}

#[test]
fn gpu_per_layer_stack_and_split_batches_agree() {
    let causal = BitMatrix::from_fn(20, |q, k| k <= q);
    let window = BitMatrix::from_fn(20, |q, k| k <= q + 1 && q <= k + 1);
    let stack = LayerStack::new(vec![Layer::single(causal.transpose()), Layer { heads: vec![window, causal] }])
        .expect("valid stack");
    let config = FlowConfig { d_model: 32, heads: 2, layers: 4, seed: 5 };
    let masks = FlowMasks::from_stack(&stack, &config).expect("fits");
    let model = FlowModel::new(config, 20).expect("valid");
    let whole = gpu().run_blocking(&model, &masks).expect("GPU run");
    let split =
        GpuFlow::new_blocking().expect("adapter").with_batch_limit(3).run_blocking(&model, &masks).expect("GPU run");
    assert_eq!(whole.influence, split.influence, "batches of 2 perturbed copies change nothing");
    assert_eq!(whole.output, split.output);
    assert_close("stack", &cpu::run_flow(&model, &masks), &whole);
    assert_exact("stack", &FlowReport::new(&whole, &masks));
}

#[test]
fn gpu_on_an_injected_device_matches_the_own_device_bit_for_bit() {
    let (device, queue, info) = injected_device();
    let injected = GpuFlow::from_device_blocking(device, queue, &info).expect("kernels compile on the injected device");
    assert_eq!(injected.adapter().name, info.name);
    let config = FlowConfig { d_model: 32, heads: 4, layers: 3, seed: 9 };
    let mask = preset("sliding-window", 24, &[("w", "3")]);
    let masks = FlowMasks::uniform(&mask, &config);
    let model = FlowModel::new(config, 24).expect("valid");
    let a = injected.run_blocking(&model, &masks).expect("GPU run");
    let b = gpu().run_blocking(&model, &masks).expect("GPU run");
    assert_eq!(a.influence, b.influence);
    assert_eq!(a.attention, b.attention);
    assert_eq!(a.output, b.output);
    // Runs reuse nothing stale: a second run on the same device gives the same result.
    assert_eq!(injected.run_blocking(&model, &masks).expect("GPU run").influence, a.influence);
}

/// A device opened by the test itself, with wgpu's default limits rather than the adapter's.
fn injected_device() -> (wgpu::Device, wgpu::Queue, wgpu::AdapterInfo) {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))
        .expect("NO GPU ADAPTER: install mesa-vulkan-drivers (lavapipe)");
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("test device"),
        required_limits: wgpu::Limits::default(),
        ..Default::default()
    }))
    .expect("device");
    (device, queue, adapter.get_info())
}
