//! Shared by the flow tests of the core (CPU path) and of hasseflow-gpu (WGSL kernels), included
//! with `#[path]`: the catalog masks both check against `R(L)`, and the per-layer assertion.

use std::collections::BTreeMap;

use hasseflow_core::BitMatrix;
use hasseflow_core::flow::FlowReport;
use hasseflow_core::presets::build_preset;

pub fn preset(name: &str, n: usize, params: &[(&str, &str)]) -> BitMatrix {
    let params: BTreeMap<String, String> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    build_preset(name, n, &params, 1 << 12).expect("test preset builds")
}

/// Every layer agrees with `R(L)` ([`hasseflow_core::flow::LayerAgreement::exact`]); the message
/// names the first layer that does not.
pub fn assert_exact(name: &str, r: &FlowReport) {
    for l in &r.layers {
        assert!(l.exact(), "{name}: layer {} disagrees with R(L): {l:?}", l.layer);
    }
}

/// The catalog masks the issue names, as `(name, mask)`.
pub fn catalog_masks() -> Vec<(String, BitMatrix)> {
    vec![
        ("causal".into(), preset("causal", 24, &[])),
        ("sliding-window w=3".into(), preset("sliding-window", 24, &[("w", "3")])),
        ("bidirectional-window r=1".into(), preset("bidirectional-window", 20, &[("r", "1")])),
        ("block-causal s=4".into(), preset("block-causal", 24, &[("s", "4")])),
        ("butterfly n=6".into(), preset("butterfly", 6, &[])),
        ("block-two-stream n=8 s=2".into(), preset("block-two-stream", 8, &[("s", "2")])),
        ("random p=0.1".into(), preset("random", 24, &[("p", "0.1"), ("seed", "3")])),
    ]
}
