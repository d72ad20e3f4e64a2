//! The CPU reference of the flow model: the test oracle for the WGSL kernels and the fallback
//! when no GPU adapter exists. Plain `f32` loops in the same order of operations as the kernels.

use super::{BackendInfo, FlowMasks, FlowModel, FlowRaw, LN_EPS};
use crate::bits::Ones;

/// Runs the unperturbed pass and the `n` perturbed passes (copy `k` adds
/// [`FlowModel::perturbation`] to input `k`) and measures every layer's influence.
///
/// # Panics
/// If `masks` has a different size or layer count than `model` (build both from one config).
///
/// Complexity: `(n + 1) · layers · (n · 8 d² + Σ_heads ones(M) · 2 d/h)` multiply-adds.
///
/// # Examples
/// ```
/// use hasseflow_core::BitMatrix;
/// use hasseflow_core::flow::{FlowConfig, FlowMasks, FlowModel, FlowReport, cpu};
/// let config = FlowConfig { layers: 3, ..FlowConfig::default() };
/// let window = BitMatrix::from_fn(6, |q, k| q >= k && q - k < 2);
/// let model = FlowModel::new(config, 6).unwrap();
/// let masks = FlowMasks::uniform(&window, &config);
/// let report = FlowReport::new(&cpu::run_flow(&model, &masks), &masks);
/// assert!(report.layers.iter().all(|l| l.agreement == 1.0));
/// ```
pub fn run_flow(model: &FlowModel, masks: &FlowMasks) -> FlowRaw {
    let mut job = CpuFlowJob::new(model, masks);
    job.step(model, masks, usize::MAX);
    job.finish()
}

/// [`run_flow`] in steps, so a caller without threads (the browser's main thread) can yield
/// between perturbed copies and drop a run whose mask has changed. The result is identical to
/// [`run_flow`]'s whatever the step sizes.
///
/// ```
/// use hasseflow_core::BitMatrix;
/// use hasseflow_core::flow::{FlowConfig, FlowMasks, FlowModel, cpu};
/// let config = FlowConfig { layers: 2, ..FlowConfig::default() };
/// let mask = BitMatrix::from_fn(5, |q, k| k <= q);
/// let (model, masks) = (FlowModel::new(config, 5).unwrap(), FlowMasks::uniform(&mask, &config));
/// let mut job = cpu::CpuFlowJob::new(&model, &masks);
/// while !job.step(&model, &masks, 2) {
///     assert!(job.progress() < 1.0);
/// }
/// assert_eq!(job.finish(), cpu::run_flow(&model, &masks));
/// ```
#[derive(Debug)]
pub struct CpuFlowJob {
    n: usize,
    next: usize,
    base_states: Vec<Vec<f32>>,
    attention: Vec<Vec<f32>>,
    output: Vec<f32>,
    influence: Vec<Vec<f32>>,
    scratch: Scratch,
}

impl CpuFlowJob {
    /// Runs the unperturbed pass (one copy's worth of work), keeping every layer's states and
    /// attention.
    ///
    /// # Panics
    /// If `masks` has a different size or layer count than `model` (build both from one config).
    pub fn new(model: &FlowModel, masks: &FlowMasks) -> CpuFlowJob {
        let cfg = *model.config();
        let n = model.n();
        assert_eq!(masks.n(), n, "masks and model differ in size");
        assert_eq!(masks.layers(), cfg.layers, "masks and model differ in layers");
        let mut scratch = Scratch::new(model);
        let mut base_states = Vec::with_capacity(cfg.layers);
        let mut attention = Vec::with_capacity(cfg.layers);
        let mut h = model.inputs().to_vec();
        for l in 0..cfg.layers {
            let mut probs = vec![0f32; n * n];
            layer_forward(model, masks, l, &mut h, &mut scratch, Some(&mut probs));
            let scale = 1.0 / cfg.heads as f32;
            probs.iter_mut().for_each(|p| *p *= scale);
            attention.push(probs);
            base_states.push(h.clone());
        }
        CpuFlowJob {
            n,
            next: 0,
            base_states,
            attention,
            output: h,
            influence: vec![vec![0f32; n * n]; cfg.layers],
            scratch,
        }
    }

    /// Runs up to `copies` more perturbed copies; returns whether all `n` are done. `model` and
    /// `masks` must be the ones given to [`CpuFlowJob::new`].
    pub fn step(&mut self, model: &FlowModel, masks: &FlowMasks, copies: usize) -> bool {
        let d = model.config().d_model;
        let n = self.n;
        let end = self.next.saturating_add(copies).min(n);
        for k in self.next..end {
            let mut h = model.inputs().to_vec();
            for (x, p) in h[k * d..(k + 1) * d].iter_mut().zip(model.perturbation()) {
                *x += p;
            }
            for (l, base) in self.base_states.iter().enumerate() {
                layer_forward(model, masks, l, &mut h, &mut self.scratch, None);
                for q in 0..n {
                    let a = &h[q * d..(q + 1) * d];
                    let b = &base[q * d..(q + 1) * d];
                    let sq: f32 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
                    self.influence[l][q * n + k] = sq.sqrt();
                }
            }
        }
        self.next = end;
        self.is_done()
    }

    /// Whether every perturbed copy has run.
    pub fn is_done(&self) -> bool {
        self.next == self.n
    }

    /// Fraction of the `n + 1` copies done (the unperturbed one counts).
    pub fn progress(&self) -> f64 {
        (self.next + 1) as f64 / (self.n + 1) as f64
    }

    /// The measurements (copies not yet run show no influence).
    pub fn finish(self) -> FlowRaw {
        FlowRaw {
            n: self.n,
            backend: BackendInfo::cpu(),
            influence: self.influence,
            attention: self.attention,
            output: self.output,
        }
    }
}

/// Buffers reused across layers and copies.
#[derive(Debug)]
struct Scratch {
    qkv: Vec<f32>,
    heads_out: Vec<f32>,
    hidden: Vec<f32>,
    scores: Vec<f32>,
}

impl Scratch {
    fn new(model: &FlowModel) -> Scratch {
        let n = model.n();
        let d = model.config().d_model;
        Scratch {
            qkv: vec![0.0; n * 3 * d],
            heads_out: vec![0.0; n * d],
            hidden: vec![0.0; n * model.config().hidden()],
            scores: vec![0.0; n],
        }
    }
}

/// LayerNorm of each `d`-wide row of `x`, in place (biased variance, [`LN_EPS`]).
pub fn layer_norm(x: &mut [f32], gain: &[f32], bias: &[f32]) {
    let d = gain.len();
    for row in x.chunks_exact_mut(d) {
        let mean = row.iter().sum::<f32>() / d as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / d as f32;
        let inv = 1.0 / (var + LN_EPS).sqrt();
        for j in 0..d {
            row[j] = (row[j] - mean) * inv * gain[j] + bias[j];
        }
    }
}

/// `out[r] = bias + x[r] · W` for each row (`W` input-major, `din x dout`); with `accumulate`
/// the product is added to `out` instead.
fn matmul(x: &[f32], w: &[f32], bias: &[f32], out: &mut [f32], din: usize, accumulate: bool) {
    let dout = bias.len();
    for (row, dst) in x.chunks_exact(din).zip(out.chunks_exact_mut(dout)) {
        if accumulate {
            dst.iter_mut().zip(bias).for_each(|(o, b)| *o += b);
        } else {
            dst.copy_from_slice(bias);
        }
        for (i, &xi) in row.iter().enumerate() {
            for (a, &wij) in dst.iter_mut().zip(&w[i * dout..(i + 1) * dout]) {
                *a += xi * wij;
            }
        }
    }
}

/// GELU, tanh approximation (as in GPT-2), also used by the WGSL kernel.
pub fn gelu(x: f32) -> f32 {
    const C: f32 = 0.797_884_6; // sqrt(2 / pi)
    0.5 * x * (1.0 + (C * (x + 0.044_715 * x * x * x)).tanh())
}

/// One layer in place on `h` (`n x d`). `probs`, when given, receives the sum over heads of the
/// attention probabilities (`n x n`).
fn layer_forward(
    model: &FlowModel,
    masks: &FlowMasks,
    layer: usize,
    h: &mut [f32],
    s: &mut Scratch,
    mut probs: Option<&mut Vec<f32>>,
) {
    let cfg = model.config();
    let n = model.n();
    let d = cfg.d_model;
    let dh = cfg.head_dim();
    let f = cfg.hidden();
    let o = model.offsets();
    let w = &model.weights()[layer * o.stride..(layer + 1) * o.stride];
    matmul(h, &w[o.qkv..o.qkv + 3 * d * d], &w[o.qkv_bias..o.qkv_bias + 3 * d], &mut s.qkv, d, false);
    let scale = 1.0 / (dh as f32).sqrt();
    for head in 0..cfg.heads {
        let mask = masks.mask(layer, head);
        let (qo, ko, vo) = (head * dh, d + head * dh, 2 * d + head * dh);
        for q in 0..n {
            let out = &mut s.heads_out[q * d + head * dh..q * d + (head + 1) * dh];
            out.fill(0.0);
            let query = &s.qkv[q * 3 * d + qo..q * 3 * d + qo + dh];
            let mut max = f32::NEG_INFINITY;
            let mut count = 0;
            for k in Ones::new(mask.row(q)) {
                let key = &s.qkv[k * 3 * d + ko..k * 3 * d + ko + dh];
                let score = query.iter().zip(key).map(|(a, b)| a * b).sum::<f32>() * scale;
                s.scores[count] = score;
                count += 1;
                max = max.max(score);
            }
            if count == 0 {
                // Fully masked row: zero output (FlexAttention), no 0/0.
                continue;
            }
            let mut sum = 0.0;
            for (i, k) in Ones::new(mask.row(q)).enumerate() {
                let e = (s.scores[i] - max).exp();
                s.scores[i] = e;
                sum += e;
                let value = &s.qkv[k * 3 * d + vo..k * 3 * d + vo + dh];
                out.iter_mut().zip(value).for_each(|(a, v)| *a += e * v);
            }
            let inv = 1.0 / sum;
            out.iter_mut().for_each(|a| *a *= inv);
            if let Some(probs) = probs.as_deref_mut() {
                for (i, k) in Ones::new(mask.row(q)).enumerate() {
                    probs[q * n + k] += s.scores[i] * inv;
                }
            }
        }
    }
    matmul(&s.heads_out, &w[o.out..o.out + d * d], &w[o.out_bias..o.out_bias + d], h, d, true);
    layer_norm(h, &w[o.ln1_gain..o.ln1_gain + d], &w[o.ln1_bias..o.ln1_bias + d]);
    matmul(h, &w[o.mlp1..o.mlp1 + d * f], &w[o.mlp1_bias..o.mlp1_bias + f], &mut s.hidden, d, false);
    s.hidden.iter_mut().for_each(|x| *x = gelu(*x));
    matmul(&s.hidden, &w[o.mlp2..o.mlp2 + f * d], &w[o.mlp2_bias..o.mlp2_bias + d], h, f, true);
    layer_norm(h, &w[o.ln2_gain..o.ln2_gain + d], &w[o.ln2_bias..o.ln2_bias + d]);
}
