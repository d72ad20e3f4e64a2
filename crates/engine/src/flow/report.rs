//! Comparing a measured flow with the theory: per layer, the influence support (above a relative
//! threshold) and the attention-rollout support against `R(L)`.

use super::{FlowMasks, FlowRaw};
use crate::bits::BitMatrix;

/// Relative influence threshold: `q` counts as influenced by `k` after layer `L` when
/// `||Δh_q|| > INFLUENCE_THRESHOLD · max_{q',k'} ||Δh_q'||` over that layer.
///
/// Outside `R(L)` the perturbed copy computes bit-identical states (the same operations on the
/// same operands, on the CPU and in the kernels alike), so the measured change there is exactly 0.
/// Inside `R(L)` a change is either rounded away entirely or is at least one `f32` ulp of a
/// unit-scale state (relative `~6e-8`; the smallest inside value measured on 16-layer window
/// chains is `7.8e-8`). A threshold of `1e-9` sits below that floor: it counts every change that
/// survived rounding and nothing else. A "visible" level such as `1e-4` would call most cells of
/// long chains uninfluenced (per hop the signal shrinks by the attention weight, about `0.4` for a
/// window of 2); docs/FLOW.md has the measured margins.
pub const INFLUENCE_THRESHOLD: f64 = 1e-9;

/// Agreement of one layer's measured flow with `R(L)`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LayerAgreement {
    /// `L`, 1-based.
    pub layer: usize,
    /// Fraction of the `n²` cells where the influence support equals `R(L)`.
    pub agreement: f64,
    /// `|R(L)|`.
    pub reach: usize,
    /// Cells above the threshold.
    pub support: usize,
    /// Cells above the threshold outside `R(L)`.
    pub false_positives: usize,
    /// Cells of `R(L)` at or below the threshold.
    pub false_negatives: usize,
    /// Smallest relative influence inside `R(L)` (the margin above the threshold).
    pub min_inside: f64,
    /// Largest relative influence outside `R(L)` (0 when exact).
    pub max_outside: f64,
    /// Fraction of cells where the rollout support (its non-zero pattern) equals `R(L)`.
    pub rollout_agreement: f64,
}

/// The per-layer comparison of a [`FlowRaw`] with the theory.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FlowReport {
    /// Positions.
    pub n: usize,
    /// The relative threshold used ([`INFLUENCE_THRESHOLD`] unless chosen otherwise).
    pub threshold: f64,
    /// One entry per layer, `L = 1..=layers`.
    pub layers: Vec<LayerAgreement>,
}

impl LayerAgreement {
    /// Whether this layer's influence support and rollout support both equal `R(L)`.
    pub fn exact(&self) -> bool {
        self.false_positives == 0 && self.false_negatives == 0 && self.rollout_agreement == 1.0
    }
}

impl FlowReport {
    /// Compares `raw` with `R(L)` of `masks` at the default [`INFLUENCE_THRESHOLD`].
    ///
    /// Complexity: `O(layers · n²)` for the influence, plus rollout `O(layers · ones(A) · n)`.
    pub fn new(raw: &FlowRaw, masks: &FlowMasks) -> FlowReport {
        FlowReport::with_threshold(raw, masks, INFLUENCE_THRESHOLD)
    }

    /// Compares `raw` with `R(L)` of `masks`, counting `q` as influenced by `k` when its relative
    /// influence exceeds `threshold` (a choice: THEORY §7 fixes no level; higher levels ask for
    /// a visible change and call faint long-chain paths uninfluenced).
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn with_threshold(raw: &FlowRaw, masks: &FlowMasks, threshold: f64) -> FlowReport {
        let mut builder = ReportBuilder::new(raw, masks, threshold);
        while !builder.step(raw) {}
        builder.finish()
    }

    /// This report at another threshold: the influence columns are recomputed (`O(layers · n²)`),
    /// the rollout agreement (independent of the threshold) is kept.
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn rethreshold(&self, raw: &FlowRaw, masks: &FlowMasks, threshold: f64) -> FlowReport {
        let layers = raw
            .influence
            .iter()
            .zip(masks.reach())
            .zip(&self.layers)
            .map(|((infl, r), old)| compare(old.layer, raw.n, infl, &r, threshold, old.rollout_agreement))
            .collect();
        FlowReport { n: raw.n, threshold, layers }
    }

    /// Whether every layer agrees exactly, for both views.
    pub fn exact(&self) -> bool {
        self.layers.iter().all(LayerAgreement::exact)
    }
}

fn compare(layer: usize, n: usize, infl: &[f32], r: &BitMatrix, threshold: f64, rollout: f64) -> LayerAgreement {
    let max = infl.iter().fold(0f32, |m, &x| m.max(x)) as f64;
    let norm = if max > 0.0 { 1.0 / max } else { 0.0 };
    let (mut support, mut fp, mut fneg) = (0, 0, 0);
    let mut min_inside = f64::INFINITY;
    let mut max_outside = 0f64;
    for q in 0..n {
        for k in 0..n {
            let rel = infl[q * n + k] as f64 * norm;
            let inside = r.get(q, k);
            let above = rel > threshold;
            support += usize::from(above);
            if inside {
                min_inside = min_inside.min(rel);
                fneg += usize::from(!above);
            } else {
                max_outside = max_outside.max(rel);
                fp += usize::from(above);
            }
        }
    }
    let cells = (n * n).max(1) as f64;
    LayerAgreement {
        layer,
        agreement: (n * n - fp - fneg) as f64 / cells,
        reach: r.count_ones(),
        support,
        false_positives: fp,
        false_negatives: fneg,
        min_inside: if min_inside.is_finite() { min_inside } else { 0.0 },
        max_outside,
        rollout_agreement: rollout,
    }
}

/// One run's report as the CLI's `flow --json` and the app's report export write it: who ran it,
/// the model, and the per-layer comparison.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FlowSummary {
    /// CPU or GPU (`"cpu"` or `"gpu"` in JSON).
    pub backend: super::BackendKind,
    /// GPU adapter name.
    pub adapter: Option<String>,
    /// GPU API.
    pub api: Option<String>,
    /// Whether the adapter is a software one.
    pub software_adapter: bool,
    /// Positions.
    pub n: usize,
    /// The model.
    pub config: super::FlowConfig,
    /// The relative influence threshold.
    pub threshold: f64,
    /// Every layer exact, influence and rollout.
    pub exact: bool,
    /// Per-layer comparison.
    pub layers: Vec<LayerAgreement>,
}

impl FlowSummary {
    /// The summary of `report`, computed from `raw` for a model with `config`.
    pub fn new(raw: &FlowRaw, report: &FlowReport, config: super::FlowConfig) -> FlowSummary {
        FlowSummary {
            backend: raw.backend.kind,
            adapter: raw.backend.adapter.clone(),
            api: raw.backend.api.clone(),
            software_adapter: raw.backend.software_adapter,
            n: report.n,
            config,
            threshold: report.threshold,
            exact: report.exact(),
            layers: report.layers.clone(),
        }
    }
}

/// A [`FlowReport`] one layer at a time (a caller on the browser's main thread yields between
/// layers: rollout costs `O(ones(A) · n)` per layer). Holds one rollout matrix, not all of them.
#[derive(Clone, Debug)]
pub struct ReportBuilder {
    n: usize,
    threshold: f64,
    reach: Vec<BitMatrix>,
    rollout: Vec<f64>,
    layers: Vec<LayerAgreement>,
}

impl ReportBuilder {
    /// A builder for `raw` against `R(L)` of `masks` at `threshold`.
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn new(raw: &FlowRaw, masks: &FlowMasks, threshold: f64) -> ReportBuilder {
        let n = raw.n;
        let mut rollout = vec![0f64; n * n];
        for q in 0..n {
            rollout[q * n + q] = 1.0;
        }
        ReportBuilder { n, threshold, reach: masks.reach(), rollout, layers: Vec::new() }
    }

    /// Compares the next layer of `raw` (the one given to [`ReportBuilder::new`]); returns whether
    /// every layer is done.
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn step(&mut self, raw: &FlowRaw) -> bool {
        let l = self.layers.len();
        if l < raw.attention.len().min(self.reach.len()) {
            let n = self.n;
            self.rollout = rollout_layer(&self.rollout, &raw.attention[l], n);
            let r = &self.reach[l];
            let ok = (0..n * n).filter(|&i| (self.rollout[i] > 0.0) == r.get(i / n, i % n)).count();
            let roll = ok as f64 / (n * n).max(1) as f64;
            self.layers.push(compare(l + 1, n, &raw.influence[l], r, self.threshold, roll));
        }
        self.layers.len() >= raw.attention.len().min(self.reach.len())
    }

    /// The report (layers not stepped through are missing).
    pub fn finish(self) -> FlowReport {
        FlowReport { n: self.n, threshold: self.threshold, layers: self.layers }
    }
}

/// One rollout step: `½ A · current + ½ current`.
fn rollout_layer(current: &[f64], a: &[f32], n: usize) -> Vec<f64> {
    let mut next = vec![0f64; n * n];
    for q in 0..n {
        let dst = &mut next[q * n..(q + 1) * n];
        for (d, s) in dst.iter_mut().zip(&current[q * n..(q + 1) * n]) {
            *d = 0.5 * s;
        }
        for j in 0..n {
            let w = a[q * n + j] as f64;
            if w > 0.0 {
                let w = 0.5 * w;
                for (d, s) in dst.iter_mut().zip(&current[j * n..(j + 1) * n]) {
                    *d += w * s;
                }
            }
        }
    }
    next
}

/// Attention rollout (Abnar & Zuidema 2020): `Â_l = ½ A_l + ½ I` with `A_l` the head-averaged
/// attention of layer `l`, and `rollout(L) = Â_L ··· Â_1`, in `f64`, row-major `n x n` per layer.
/// Its non-zero pattern is `R(L)` whenever every allowed key gets a positive weight (softmax does).
///
/// Complexity: `O(Σ_l nonzeros(A_l) · n)`.
#[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
pub fn rollout(attention: &[Vec<f32>], n: usize) -> Vec<Vec<f64>> {
    let mut current = vec![0f64; n * n];
    for q in 0..n {
        current[q * n + q] = 1.0;
    }
    attention
        .iter()
        .map(|a| {
            current = rollout_layer(&current, a, n);
            current.clone()
        })
        .collect()
}
