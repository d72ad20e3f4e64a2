//! Real information flow (THEORY §7): a small Transformer with seeded random weights runs the
//! mask, and the measured influence of each input on each position is compared with `R(L)`.
//!
//! - [`FlowConfig`]: `d_model`, heads, layers, seed (checked ranges, typed [`FlowError`]).
//! - [`FlowModel`]: the weights and inputs, drawn from [`SplitMix64`] with arithmetic only, so
//!   the same seed gives bit-identical weights natively and in wasm.
//! - [`FlowMasks`]: which mask each head of each layer uses (one mask, or a [`LayerStack`]), and
//!   the theory's `R(L)` for them.
//! - [`cpu::run_flow`]: the reference forward pass in `f32` (the test oracle, and the fallback
//!   when no GPU adapter exists); `hasseflow-gpu` runs the same math in WGSL and returns the same
//!   [`FlowRaw`].
//! - [`FlowJob`]: the CPU measurement and the comparison as one [`Job`](crate::job::Job).
//! - [`FlowReport::new`]: per-layer agreement of the influence support (relative threshold
//!   [`INFLUENCE_THRESHOLD`]) and of attention rollout with `R(L)`.
//!
//! The model (post-LayerNorm, as in the original Transformer; docs/FLOW.md): `x_p = tok[t_p] +
//! pos[p]`, then per layer `h = LN1(h + W_o · MHA(h) + b_o)` and
//! `h = LN2(h + W_2 · gelu(W_1 · h + b_1) + b_2)`. Post-LN keeps every state at unit scale, so a
//! perturbation loses only a constant factor per attention hop (pre-LN divides it by the growing
//! residual norm, and deep chains fall below `f32` resolution). Attention of head
//! `i` at query `q` is a softmax over the keys its mask allows (`M[q][k] = 1`, without the
//! diagonal unless the mask has it); a fully masked row outputs 0 (FlexAttention's convention),
//! so only the residual carries that position. One layer therefore moves information along
//! `M ∨ I`, which is what the theory predicts.

pub mod cpu;
mod job;
mod lanes;
mod report;

pub use job::{CompareJob, FlowJob, FlowOutput};
pub use report::{FlowReport, FlowSummary, INFLUENCE_THRESHOLD, LayerAgreement, ReportBuilder, rollout};

use crate::bits::BitMatrix;
use crate::rng::SplitMix64;
use crate::stack::LayerStack;

/// Smallest and largest `d_model`.
pub const D_MODEL_RANGE: (usize, usize) = (16, 128);
/// Largest number of heads.
pub const MAX_HEADS: usize = 8;
/// Largest number of layers.
pub const MAX_LAYERS: usize = 16;
/// Largest number of positions.
pub const MAX_N: usize = 512;
/// Vocabulary size of the token embedding table.
pub const VOCAB: usize = 256;
/// Width of the MLP's hidden layer, in multiples of `d_model`.
pub const MLP_RATIO: usize = 2;
/// LayerNorm's epsilon.
pub const LN_EPS: f32 = 1e-5;

/// Shape and seed of the random Transformer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct FlowConfig {
    /// Width of the residual stream, 16..=128, a multiple of `heads`.
    pub d_model: usize,
    /// Attention heads per layer, 1..=8.
    pub heads: usize,
    /// Layers, 1..=16.
    pub layers: usize,
    /// Seed of every weight and input.
    pub seed: u64,
}

impl Default for FlowConfig {
    fn default() -> Self {
        FlowConfig { d_model: 32, heads: 4, layers: 4, seed: 0 }
    }
}

/// Why a flow computation cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FlowError {
    /// `d_model` outside 16..=128.
    #[error("d_model must be between 16 and 128, got {0}")]
    DModel(usize),
    /// Heads outside 1..=8.
    #[error("heads must be between 1 and 8, got {0}")]
    Heads(usize),
    /// `d_model` not a multiple of the heads.
    #[error("d_model {d_model} is not a multiple of heads {heads}")]
    HeadSplit {
        /// Width.
        d_model: usize,
        /// Heads.
        heads: usize,
    },
    /// Layers outside 1..=16.
    #[error("layers must be between 1 and 16, got {0}")]
    Layers(usize),
    /// Positions outside 1..=512.
    #[error("the flow model takes 1 to 512 positions, the mask has {0}")]
    Positions(usize),
    /// Masks given by parts that do not describe the model ([`FlowMasks::from_parts`]).
    #[error("the flow masks are malformed: {0}")]
    Parts(&'static str),
    /// Influence columns that do not fit the run ([`FlowRaw::put_columns`]).
    #[error("influence columns {start}..{start}+{len} ({values} values) do not fit the run")]
    Columns {
        /// First copy.
        start: usize,
        /// Copies.
        len: usize,
        /// Values given.
        values: usize,
    },
    /// A stack layer has more head masks than the model has heads.
    #[error("stack layer {layer} has {masks} head masks but the model has only {heads} heads")]
    TooManyHeadMasks {
        /// 0-based stack layer.
        layer: usize,
        /// Head masks in that layer.
        masks: usize,
        /// Model heads.
        heads: usize,
    },
}

impl FlowConfig {
    /// Checks every range and that the heads split `d_model` evenly.
    pub fn validate(&self) -> Result<(), FlowError> {
        if !(D_MODEL_RANGE.0..=D_MODEL_RANGE.1).contains(&self.d_model) {
            return Err(FlowError::DModel(self.d_model));
        }
        if !(1..=MAX_HEADS).contains(&self.heads) {
            return Err(FlowError::Heads(self.heads));
        }
        if !self.d_model.is_multiple_of(self.heads) {
            return Err(FlowError::HeadSplit { d_model: self.d_model, heads: self.heads });
        }
        if !(1..=MAX_LAYERS).contains(&self.layers) {
            return Err(FlowError::Layers(self.layers));
        }
        Ok(())
    }

    /// [`FlowConfig::validate`], and `n` positions within `1..=MAX_N`: what [`FlowModel::new`]
    /// checks before it makes the weights (the web page checks this much and leaves the weights to
    /// its workers).
    pub fn check(&self, n: usize) -> Result<(), FlowError> {
        self.validate()?;
        if !(1..=MAX_N).contains(&n) {
            return Err(FlowError::Positions(n));
        }
        Ok(())
    }

    /// Width of one head.
    pub fn head_dim(&self) -> usize {
        self.d_model / self.heads
    }

    /// Width of the MLP's hidden layer.
    pub fn hidden(&self) -> usize {
        self.d_model * MLP_RATIO
    }
}

/// Where each parameter of one layer starts in [`FlowModel::weights`] (in `f32`s, relative to
/// the layer's start). Matrices are stored input-major: `W[i][j]` at `i * out + j`, so
/// `y_j = b_j + Σ_i x_i W[i][j]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerOffsets {
    /// LayerNorm 1 gain and bias (`d` each).
    pub ln1_gain: usize,
    /// See `ln1_gain`.
    pub ln1_bias: usize,
    /// `d x 3d` projection to `[Q | K | V]`, bias `3d`.
    pub qkv: usize,
    /// See `qkv`.
    pub qkv_bias: usize,
    /// `d x d` output projection, bias `d`.
    pub out: usize,
    /// See `out`.
    pub out_bias: usize,
    /// LayerNorm 2 gain and bias.
    pub ln2_gain: usize,
    /// See `ln2_gain`.
    pub ln2_bias: usize,
    /// `d x hidden` first MLP matrix, bias `hidden`.
    pub mlp1: usize,
    /// See `mlp1`.
    pub mlp1_bias: usize,
    /// `hidden x d` second MLP matrix, bias `d`.
    pub mlp2: usize,
    /// See `mlp2`.
    pub mlp2_bias: usize,
    /// Floats per layer.
    pub stride: usize,
}

impl LayerOffsets {
    /// The layout for `config`.
    pub fn new(config: &FlowConfig) -> LayerOffsets {
        let d = config.d_model;
        let f = config.hidden();
        let mut at = 0;
        let mut take = |len: usize| {
            let start = at;
            at += len;
            start
        };
        let ln1_gain = take(d);
        let ln1_bias = take(d);
        let qkv = take(d * 3 * d);
        let qkv_bias = take(3 * d);
        let out = take(d * d);
        let out_bias = take(d);
        let ln2_gain = take(d);
        let ln2_bias = take(d);
        let mlp1 = take(d * f);
        let mlp1_bias = take(f);
        let mlp2 = take(f * d);
        let mlp2_bias = take(d);
        LayerOffsets {
            ln1_gain,
            ln1_bias,
            qkv,
            qkv_bias,
            out,
            out_bias,
            ln2_gain,
            ln2_bias,
            mlp1,
            mlp1_bias,
            mlp2,
            mlp2_bias,
            stride: at,
        }
    }
}

/// The random Transformer for `n` positions: weights, inputs and the perturbation direction.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowModel {
    config: FlowConfig,
    n: usize,
    offsets: LayerOffsets,
    weights: Vec<f32>,
    inputs: Vec<f32>,
    perturbation: Vec<f32>,
}

/// A uniform draw in `[-a, a)` using only IEEE basic arithmetic (bit-identical on every target).
fn uniform(rng: &mut SplitMix64, a: f64) -> f32 {
    ((rng.next_f64() * 2.0 - 1.0) * a) as f32
}

impl FlowModel {
    /// Draws the model for `n` positions.
    ///
    /// Weights use their own stream (seeded by `config.seed`) and do not depend on `n`; inputs and
    /// the perturbation use a second stream. Matrices are uniform with variance `1/fan_in`
    /// (`a = sqrt(3 / fan_in)`), LayerNorm gains `1 ± 0.1`, biases `± 0.1`, embeddings unit
    /// variance; the perturbation is one fixed random direction scaled to norm `sqrt(d_model)`
    /// (the size of an embedding), so it moves an input as much as swapping its token would.
    ///
    /// # Examples
    /// ```
    /// use hasseflow_engine::flow::{FlowConfig, FlowModel};
    /// let a = FlowModel::new(FlowConfig::default(), 8).unwrap();
    /// let b = FlowModel::new(FlowConfig::default(), 8).unwrap();
    /// assert_eq!(a, b);
    /// ```
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn new(config: FlowConfig, n: usize) -> Result<FlowModel, FlowError> {
        config.check(n)?;
        let d = config.d_model;
        let f = config.hidden();
        let offsets = LayerOffsets::new(&config);
        let mut rng = SplitMix64::new(config.seed);
        let mut weights = Vec::with_capacity(offsets.stride * config.layers);
        // Out of line: inlined, its twelve calls a layer were 4 KB of the flow worker's wasm.
        #[inline(never)]
        fn fill_with(rng: &mut SplitMix64, w: &mut Vec<f32>, len: usize, center: f32, a: f64) {
            w.extend((0..len).map(|_| center + uniform(rng, a)));
        }
        let mut fill = |w: &mut Vec<f32>, len: usize, center: f32, a: f64| fill_with(&mut rng, w, len, center, a);
        let ga = |fan_in: usize| (3.0 / fan_in as f64).sqrt();
        for _ in 0..config.layers {
            let start = weights.len();
            fill(&mut weights, d, 1.0, 0.1);
            fill(&mut weights, d, 0.0, 0.1);
            fill(&mut weights, d * 3 * d, 0.0, ga(d));
            fill(&mut weights, 3 * d, 0.0, 0.1);
            fill(&mut weights, d * d, 0.0, ga(d));
            fill(&mut weights, d, 0.0, 0.1);
            fill(&mut weights, d, 1.0, 0.1);
            fill(&mut weights, d, 0.0, 0.1);
            fill(&mut weights, d * f, 0.0, ga(d));
            fill(&mut weights, f, 0.0, 0.1);
            fill(&mut weights, f * d, 0.0, ga(f));
            fill(&mut weights, d, 0.0, 0.1);
            debug_assert_eq!(weights.len() - start, offsets.stride);
        }
        let mut rng = SplitMix64::new(config.seed ^ 0x5EED_F10F_u64);
        let unit = 3f64.sqrt();
        let tokens: Vec<f32> = (0..VOCAB * d).map(|_| uniform(&mut rng, unit)).collect();
        let mut perturbation: Vec<f32> = (0..d).map(|_| uniform(&mut rng, unit)).collect();
        let norm = perturbation.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>().sqrt();
        let scale = (d as f64).sqrt() / norm.max(f64::MIN_POSITIVE);
        for x in &mut perturbation {
            *x = (f64::from(*x) * scale) as f32;
        }
        let mut inputs = Vec::with_capacity(n * d);
        for _ in 0..n {
            let t = rng.below(VOCAB);
            for j in 0..d {
                inputs.push(tokens[t * d + j] + uniform(&mut rng, unit));
            }
        }
        Ok(FlowModel { config, n, offsets, weights, inputs, perturbation })
    }

    /// The configuration.
    pub fn config(&self) -> &FlowConfig {
        &self.config
    }

    /// Positions.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Per-layer parameter layout.
    pub fn offsets(&self) -> &LayerOffsets {
        &self.offsets
    }

    /// All weights, layer after layer ([`LayerOffsets::stride`] floats each).
    pub fn weights(&self) -> &[f32] {
        &self.weights
    }

    /// Input states `x_p` (token plus position embedding), `n x d_model`, row-major.
    pub fn inputs(&self) -> &[f32] {
        &self.inputs
    }

    /// The perturbation added to input `k` in copy `k + 1`, `d_model` floats.
    pub fn perturbation(&self) -> &[f32] {
        &self.perturbation
    }
}

/// The masks of every head of every model layer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowMasks {
    n: usize,
    /// `layers[l][h]`: index into `distinct` of head `h` in layer `l`.
    layers: Vec<Vec<usize>>,
    distinct: Vec<BitMatrix>,
}

impl FlowMasks {
    /// The same mask for every head of every layer.
    pub fn uniform(mask: &BitMatrix, config: &FlowConfig) -> FlowMasks {
        FlowMasks { n: mask.n(), layers: vec![vec![0; config.heads]; config.layers], distinct: vec![mask.clone()] }
    }

    /// Model layer `l` uses stack layer `l mod K`; within a layer with `m` head masks, model head
    /// `h` uses mask `h mod m` (so `m` must not exceed the model's heads: every mask is used).
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn from_stack(stack: &LayerStack, config: &FlowConfig) -> Result<FlowMasks, FlowError> {
        let mut distinct = Vec::new();
        let mut per_stack = Vec::new();
        for (l, layer) in stack.layers().iter().enumerate() {
            let m = layer.heads.len();
            if m > config.heads {
                return Err(FlowError::TooManyHeadMasks { layer: l, masks: m, heads: config.heads });
            }
            let start = distinct.len();
            distinct.extend(layer.heads.iter().cloned());
            per_stack.push((0..config.heads).map(|h| start + h % m).collect::<Vec<_>>());
        }
        let layers = (0..config.layers).map(|l| per_stack[l % per_stack.len()].clone()).collect();
        Ok(FlowMasks { n: stack.n(), layers, distinct })
    }

    /// The masks from their parts, as [`FlowMasks::distinct`] and [`FlowMasks::mask_index`] give
    /// them: the distinct masks and, for each of `config`'s layers, each head's index into them.
    ///
    /// # Errors
    /// [`FlowError::Parts`] when the parts do not describe `config`'s layers and heads (a layer or
    /// head missing, an index past the masks, masks of different sizes, none at all), or
    /// [`FlowError::Positions`] when the size is outside 1..=512.
    pub fn from_parts(
        distinct: Vec<BitMatrix>,
        layers: Vec<Vec<usize>>,
        config: &FlowConfig,
    ) -> Result<FlowMasks, FlowError> {
        let n = distinct.first().map(BitMatrix::n).ok_or(FlowError::Parts("no masks"))?;
        if !(1..=MAX_N).contains(&n) {
            return Err(FlowError::Positions(n));
        }
        if distinct.iter().any(|m| m.n() != n) {
            return Err(FlowError::Parts("masks of different sizes"));
        }
        if layers.len() != config.layers || layers.iter().any(|h| h.len() != config.heads) {
            return Err(FlowError::Parts("not one mask index per head of every layer"));
        }
        if layers.iter().flatten().any(|&i| i >= distinct.len()) {
            return Err(FlowError::Parts("a mask index past the masks"));
        }
        Ok(FlowMasks { n, layers, distinct })
    }

    /// Positions.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Model layers.
    pub fn layers(&self) -> usize {
        self.layers.len()
    }

    /// The distinct masks, for upload.
    pub fn distinct(&self) -> &[BitMatrix] {
        &self.distinct
    }

    /// Index into [`FlowMasks::distinct`] of head `head` in layer `layer` (0-based).
    pub fn mask_index(&self, layer: usize, head: usize) -> usize {
        self.layers[layer][head]
    }

    /// The mask of head `head` in layer `layer` (0-based).
    pub fn mask(&self, layer: usize, head: usize) -> &BitMatrix {
        &self.distinct[self.layers[layer][head]]
    }

    /// The theory's `R(L)` for `L = 1..=layers` (index `L - 1`): `R(L) = Ā_L · R(L-1)` with
    /// `Ā_l = (OR of layer l's head masks) ∨ I`.
    ///
    /// Complexity: one boolean product per layer, `O(ones(Ā_l) · n / 64)`.
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn reach(&self) -> Vec<BitMatrix> {
        let mut r = BitMatrix::identity(self.n);
        let mut out = Vec::with_capacity(self.layers.len());
        for heads in &self.layers {
            let mut adj = BitMatrix::identity(self.n);
            for &i in heads {
                adj = adj.or(&self.distinct[i]);
            }
            r = adj.bool_product(&r);
            out.push(r.clone());
        }
        out
    }
}

impl FlowRaw {
    /// Writes the influence columns of copies `start..start + len` (the layout of
    /// [`cpu::CpuFlowJob::columns`]: `columns[(l · n + q) · len + i]` is copy `start + i`'s
    /// influence on `q` after layer `l + 1`).
    ///
    /// # Errors
    /// The columns do not fit: `start + len` past `n`, or not `layers · n · len` values.
    pub fn put_columns(&mut self, start: usize, len: usize, columns: &[f32]) -> Result<(), FlowError> {
        let n = self.n;
        if start.checked_add(len).is_none_or(|end| end > n) || columns.len() != self.influence.len() * n * len {
            return Err(FlowError::Columns { start, len, values: columns.len() });
        }
        for (l, influence) in self.influence.iter_mut().enumerate() {
            for q in 0..n {
                let from = (l * n + q) * len;
                influence[q * n + start..q * n + start + len].copy_from_slice(&columns[from..from + len]);
            }
        }
        Ok(())
    }
}

/// Which kind of implementation produced a [`FlowRaw`]; serialised as `"cpu"` or `"gpu"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// The core's CPU path ([`cpu::run_flow`]).
    Cpu,
    /// The WGSL kernels (hasseflow-gpu).
    Gpu,
}

impl BackendKind {
    /// `"cpu"` or `"gpu"`, as the JSON reports spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::Gpu => "gpu",
        }
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which implementation produced a [`FlowRaw`] (read back from JSON where a Web Worker ran it:
/// `core::flow_task::raw_from_whole`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackendInfo {
    /// CPU or GPU.
    pub kind: BackendKind,
    /// The GPU adapter's name (`None` on the CPU path).
    pub adapter: Option<String>,
    /// The GPU API (`"vulkan"`, `"webgpu"`, ...).
    pub api: Option<String>,
    /// Whether the adapter is a software (CPU) implementation such as lavapipe or SwiftShader.
    pub software_adapter: bool,
}

impl BackendInfo {
    /// The core's CPU path.
    pub fn cpu() -> BackendInfo {
        BackendInfo { kind: BackendKind::Cpu, adapter: None, api: None, software_adapter: false }
    }
}

/// What one flow computation measured, before comparing with the theory.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRaw {
    /// Positions.
    pub n: usize,
    /// Who computed it.
    pub backend: BackendInfo,
    /// `influence[L-1][q * n + k] = ||h_L^(k)[q] - h_L[q]||₂`: how far perturbing input `k`
    /// moves the state of `q` after layer `L`.
    pub influence: Vec<Vec<f32>>,
    /// `attention[L-1][q * n + k]`: layer `L`'s attention probability of `q` on `k`, averaged over
    /// heads, in the unperturbed pass (0 where masked; rows of fully masked queries are 0).
    pub attention: Vec<Vec<f32>>,
    /// The unperturbed states after the last layer, `n x d_model`.
    pub output: Vec<f32>,
}
