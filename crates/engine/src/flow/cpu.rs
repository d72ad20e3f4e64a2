//! The CPU reference of the flow model: the test oracle for the WGSL kernels and the fallback
//! when no GPU adapter exists. Plain `f32` loops in the same order of operations as the kernels.

use super::lanes::{F4, greater};
use super::{BackendInfo, FlowMasks, FlowModel, FlowRaw, LN_EPS};
use crate::bits::{BitMatrix, Ones};
use crate::rng::SplitMix64;

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
/// use hasseflow_engine::BitMatrix;
/// use hasseflow_engine::flow::{FlowConfig, FlowMasks, FlowModel, FlowReport, cpu};
/// let config = FlowConfig { layers: 3, ..FlowConfig::default() };
/// let window = BitMatrix::from_fn(6, |q, k| q >= k && q - k < 2);
/// let model = FlowModel::new(config, 6).unwrap();
/// let masks = FlowMasks::uniform(&window, &config);
/// let report = FlowReport::new(&cpu::run_flow(&model, &masks), &masks);
/// assert!(report.layers.iter().all(|l| l.agreement == 1.0));
/// ```
#[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
pub fn run_flow(model: &FlowModel, masks: &FlowMasks) -> FlowRaw {
    let mut job = CpuFlowJob::new(model, masks);
    job.step(model, masks, usize::MAX);
    job.finish()
}

/// [`run_flow`] in steps of one layer of one pass (the unperturbed pass first, then copy after
/// copy), so a caller without threads (the browser's main thread) can yield between steps and
/// drop a run whose mask has changed. The result is identical to [`run_flow`]'s whatever the
/// step sizes.
///
/// ```
/// use hasseflow_engine::BitMatrix;
/// use hasseflow_engine::flow::{FlowConfig, FlowMasks, FlowModel, cpu};
/// let config = FlowConfig { layers: 2, ..FlowConfig::default() };
/// let mask = BitMatrix::from_fn(5, |q, k| k <= q);
/// let (model, masks) = (FlowModel::new(config, 5).unwrap(), FlowMasks::uniform(&mask, &config));
/// let mut job = cpu::CpuFlowJob::new(&model, &masks);
/// let mut steps = 0;
/// while !job.step_layers(&model, &masks, 1) {
///     steps += 1;
///     assert!(job.progress() < 1.0);
/// }
/// assert_eq!(steps + 1, 2 * 6); // 2 layers of 6 passes (the unperturbed one and 5 copies)
/// assert_eq!(job.finish(), cpu::run_flow(&model, &masks));
/// ```
#[derive(Debug)]
pub struct CpuFlowJob {
    n: usize,
    layers: usize,
    /// Layer steps done: the first `layers` are the unperturbed pass, then `layers` per copy.
    done: usize,
    /// The unperturbed state while its pass runs.
    base_h: Vec<f32>,
    /// Unperturbed states after each layer.
    base_states: Vec<Vec<f32>>,
    /// Unperturbed `[Q | K | V]` of each layer (`n x 3d`).
    base_qkv: Vec<Vec<f32>>,
    /// Unperturbed keys of each layer, transposed (see [`transpose_keys`]).
    base_keys: Vec<Vec<f32>>,
    /// `R(l + 1)` transposed: row `k` lists the positions input `k` can reach after layer `l + 1`.
    reach_t: Vec<BitMatrix>,
    attention: Vec<Vec<f32>>,
    influence: Vec<Vec<f32>>,
    /// The perturbed copy in flight.
    copy: Option<Copy>,
    scratch: Scratch,
}

/// A perturbed copy between layers: its state (only the rows in `affected` are its own; the
/// others equal the unperturbed pass) and which rows those are.
#[derive(Debug)]
struct Copy {
    h: Vec<f32>,
    affected: Vec<usize>,
    in_a: Vec<bool>,
}

impl CpuFlowJob {
    /// A job for `model` and `masks`; nothing is computed yet.
    ///
    /// # Panics
    /// If `masks` has a different size or layer count than `model` (build both from one config).
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn new(model: &FlowModel, masks: &FlowMasks) -> CpuFlowJob {
        let cfg = *model.config();
        let n = model.n();
        assert_eq!(masks.n(), n, "masks and model differ in size");
        assert_eq!(masks.layers(), cfg.layers, "masks and model differ in layers");
        CpuFlowJob {
            n,
            layers: cfg.layers,
            done: 0,
            base_h: model.inputs().to_vec(),
            base_states: Vec::with_capacity(cfg.layers),
            base_qkv: Vec::with_capacity(cfg.layers),
            base_keys: Vec::with_capacity(cfg.layers),
            reach_t: masks.reach().iter().map(BitMatrix::transpose).collect(),
            attention: Vec::with_capacity(cfg.layers),
            influence: vec![vec![0f32; n * n]; cfg.layers],
            copy: None,
            scratch: Scratch::new(model),
        }
    }

    /// Layer steps in all: `layers · (n + 1)`.
    pub(crate) fn total(&self) -> usize {
        self.layers * (self.n + 1)
    }

    /// Runs up to `steps` more layer steps; returns whether the job is done. `model` and `masks`
    /// must be the ones given to [`CpuFlowJob::new`].
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn step_layers(&mut self, model: &FlowModel, masks: &FlowMasks, steps: usize) -> bool {
        let end = self.done.saturating_add(steps).min(self.total());
        while self.done < end {
            if self.done < self.layers {
                self.base_layer(model, masks, self.done);
            } else {
                let (k, l) = ((self.done - self.layers) / self.layers, (self.done - self.layers) % self.layers);
                self.copy_layer(model, masks, k, l);
            }
            self.done += 1;
        }
        self.is_done()
    }

    /// Finishes the unperturbed pass if needed, then runs up to `copies` more perturbed copies
    /// (finishing the one in flight counts as one); returns whether the job is done.
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn step(&mut self, model: &FlowModel, masks: &FlowMasks, copies: usize) -> bool {
        let finished = self.done.saturating_sub(self.layers) / self.layers;
        let target = finished.saturating_add(copies).saturating_mul(self.layers).saturating_add(self.layers);
        self.step_layers(model, masks, target.saturating_sub(self.done))
    }

    /// The unperturbed pass's attention (per layer, `n x n`) and output (`n x d_model`), as
    /// [`CpuFlowJob::finish`] gives them, once that pass has run (`step(model, masks, 0)`).
    pub fn unperturbed(&self) -> Option<(&[Vec<f32>], &[f32])> {
        (self.done >= self.layers).then(|| (&self.attention[..], self.base_states.last().map_or(&[][..], |s| &s[..])))
    }

    /// The influence columns of the perturbed copies `copies` (copy `k` perturbs input `k`), run
    /// after the unperturbed pass, as [`run_flow`] computes them: `out[(l · n + q) · len + (k -
    /// copies.start)]` is `influence[l][q · n + k]`, with `len = copies.len()`. The job's own
    /// matrices are left as they were. Each copy depends only on the unperturbed pass, so any
    /// split of `0..n` into ranges, run anywhere in any order and put together with
    /// [`FlowRaw::put_columns`], gives [`run_flow`]'s influence bit for bit (the browser's Web
    /// Workers do so).
    ///
    /// # Panics
    /// If the unperturbed pass has not run, or `copies` ends past `n`.
    pub fn columns(&mut self, model: &FlowModel, masks: &FlowMasks, copies: std::ops::Range<usize>) -> Vec<f32> {
        assert!(self.done >= self.layers, "the unperturbed pass has run");
        assert!(copies.end <= self.n, "copies within 0..n");
        let (n, len) = (self.n, copies.len());
        let mut out = vec![0f32; self.layers * n * len];
        for (i, k) in copies.enumerate() {
            for l in 0..self.layers {
                self.copy_layer(model, masks, k, l);
            }
            for (l, influence) in self.influence.iter_mut().enumerate() {
                for q in 0..n {
                    out[(l * n + q) * len + i] = std::mem::take(&mut influence[q * n + k]);
                }
            }
        }
        out
    }

    /// Layer `l` of the unperturbed pass, keeping its states, `[Q | K | V]` and attention.
    fn base_layer(&mut self, model: &FlowModel, masks: &FlowMasks, l: usize) {
        let n = self.n;
        let mut probs = vec![0f32; n * n];
        layer_forward(model, masks, l, &mut self.base_h, &mut self.scratch, Some(&mut probs));
        let scale = 1.0 / model.config().heads as f32;
        probs.iter_mut().for_each(|p| *p *= scale);
        self.attention.push(probs);
        self.base_states.push(self.base_h.clone());
        self.base_qkv.push(self.scratch.qkv.clone());
        self.base_keys.push(self.scratch.keys.clone());
    }

    /// Layer `l` of copy `k` (input `k` perturbed). Only positions in `R(L)` of `k` can differ
    /// from the unperturbed pass after layer `L` (that is the theory; a test checks it bit for
    /// bit against the dense pass), so only those rows are recomputed, from the perturbed rows
    /// and the cached unperturbed `[Q | K | V]` and states of the others, with exactly the
    /// operations the dense pass does on them; once three quarters of the rows move, the dense
    /// layer runs instead. The rest keep influence 0. A causal mask recomputes about half the
    /// rows, a window of `w` about `w · L` per layer; a mask whose `R(1)` is full gains nothing.
    fn copy_layer(&mut self, model: &FlowModel, masks: &FlowMasks, k: usize, l: usize) {
        let cfg = model.config();
        let (n, d, dh) = (self.n, cfg.d_model, cfg.head_dim());
        let scale = 1.0 / (dh as f32).sqrt();
        if l == 0 {
            let mut h = model.inputs().to_vec();
            for (x, p) in h[k * d..(k + 1) * d].iter_mut().zip(model.perturbation()) {
                *x += p;
            }
            let mut in_a = vec![false; n];
            in_a[k] = true;
            self.copy = Some(Copy { h, affected: vec![k], in_a });
        }
        let Some(c) = self.copy.as_mut() else { return };
        let s = &mut self.scratch;
        let h = &mut c.h;
        let before = if l == 0 { model.inputs() } else { &self.base_states[l - 1][..] };
        let next: Vec<usize> = Ones::new(self.reach_t[l].row(k)).collect();
        if next.len() * 4 >= n * 3 {
            // Most rows move: the dense layer (same operations) is faster than row by row.
            for q in (0..n).filter(|&q| !c.in_a[q]) {
                h[q * d..(q + 1) * d].copy_from_slice(&before[q * d..(q + 1) * d]);
            }
            layer_forward(model, masks, l, h, s, None);
        } else {
            let w = LayerWeights::of(model, l);
            // [Q | K | V] of every row: the cached unperturbed ones, the moved rows recomputed.
            s.qkv.copy_from_slice(&self.base_qkv[l]);
            s.keys.copy_from_slice(&self.base_keys[l]);
            let stride = key_stride(n);
            for &j in &c.affected {
                let row = &mut s.qkv[j * 3 * d..(j + 1) * 3 * d];
                matmul(&h[j * d..(j + 1) * d], w.qkv, w.qkv_bias, row, d, false);
                put_key(row, d, stride, j, &mut s.keys);
            }
            let qkv = &s.qkv;
            for &q in &next {
                for head in 0..cfg.heads {
                    let qo = head * dh;
                    let out = &mut s.heads_out[q * d + head * dh..q * d + (head + 1) * dh];
                    let kv = HeadKv::of(&s.keys, stride, qkv, head, dh);
                    let query = &qkv[q * 3 * d + qo..q * 3 * d + qo + dh];
                    attend(query, masks.mask(l, head).row(q), &kv, scale, out, &mut s.scores);
                }
            }
            let f = cfg.hidden();
            for &q in &next {
                let x = &mut s.rows[q * d..(q + 1) * d];
                x.copy_from_slice(if c.in_a[q] { &h[q * d..(q + 1) * d] } else { &before[q * d..(q + 1) * d] });
                finish_rows(&w, x, &s.heads_out[q * d..(q + 1) * d], &mut s.hidden[q * f..(q + 1) * f], d);
            }
            for &q in &next {
                h[q * d..(q + 1) * d].copy_from_slice(&s.rows[q * d..(q + 1) * d]);
            }
        }
        let base = &self.base_states[l];
        for &q in &next {
            let a = &h[q * d..(q + 1) * d];
            let b = &base[q * d..(q + 1) * d];
            let sq: f32 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
            self.influence[l][q * n + k] = sq.sqrt();
            c.in_a[q] = true;
        }
        c.affected = next;
        if l + 1 == self.layers {
            self.copy = None;
        }
    }

    /// Whether every pass has run.
    pub fn is_done(&self) -> bool {
        self.done == self.total()
    }

    /// Fraction of the layer steps done.
    pub fn progress(&self) -> f64 {
        self.done as f64 / self.total() as f64
    }

    /// The measurements (copies not yet run show no influence).
    ///
    /// # Panics
    /// If the unperturbed pass has not run (call [`CpuFlowJob::step`] first).
    pub fn finish(self) -> FlowRaw {
        let output = self.base_states.last().cloned().expect("the unperturbed pass has run");
        FlowRaw { n: self.n, backend: BackendInfo::cpu(), influence: self.influence, attention: self.attention, output }
    }
}

/// Buffers reused across layers and copies.
#[derive(Debug)]
struct Scratch {
    qkv: Vec<f32>,
    heads_out: Vec<f32>,
    hidden: Vec<f32>,
    scores: Vec<f32>,
    /// The keys of `qkv`, transposed (see [`transpose_keys`]).
    keys: Vec<f32>,
    /// Rows of a perturbed copy being finished (`n x d`).
    rows: Vec<f32>,
}

impl Scratch {
    fn new(model: &FlowModel) -> Scratch {
        let n = model.n();
        let d = model.config().d_model;
        Scratch {
            qkv: vec![0.0; n * 3 * d],
            heads_out: vec![0.0; n * d],
            hidden: vec![0.0; n * model.config().hidden()],
            scores: vec![0.0; n + 64],
            keys: vec![0.0; d * key_stride(n)],
            rows: vec![0.0; n * d],
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

/// GELU, tanh approximation (as in GPT-2; the WGSL kernel computes the same function with
/// `tanh`), written as `x · σ(2u)`: `0.5 x (1 + tanh u) = x / (1 + e^(-2u))`, so that it goes
/// through [`exp`] and a loop over a slice vectorises.
#[inline(always)]
pub fn gelu(x: f32) -> f32 {
    const C: f32 = 0.797_884_6; // sqrt(2 / pi)
    x / (1.0 + exp(-2.0 * C * (x + 0.044_715 * x * x * x)))
}

/// `e^x` in `f32`, within 2 ulp of the correctly rounded value (subnormal results included; 0
/// below about -103.9, infinity above 88.72, NaN for NaN). Branch-free, so that the softmax's and
/// GELU's loops vectorise: the library `expf` is a call per element, and in wasm a software one.
/// Range reduction `x = n ln 2 + r` (`|r| <= ln 2 / 2`, `ln 2` in two parts), a degree-7
/// polynomial for `e^r`, then `2^n` applied as two normal powers of two so that a subnormal
/// result is rounded once.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4; // 0.693359375: few mantissa bits, so n * LN2_HI is exact
    const LN2_LO: f32 = -2.121_944_4e-4;
    const ROUND: f32 = 12_582_912.0; // 1.5 * 2^23: adding it rounds to an integer
    let x = x.clamp(-104.0, 88.8);
    let t = x * LOG2E + ROUND;
    let n = t - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    let p = ((((((1.987_569_1e-4 * r + 1.398_199_9e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r + 0.166_666_65)
        * r
        + 0.5)
        * r)
        * r
        + r
        + 1.0;
    // n, read from t's low mantissa bits (t = 1.5 * 2^23 + n exactly), in -150..=128.
    let n = t.to_bits() as i32 - ROUND.to_bits() as i32;
    let (n1, n2) = (n >> 1, n - (n >> 1));
    p * f32::from_bits(((n1 + 127) as u32) << 23) * f32::from_bits(((n2 + 127) as u32) << 23)
}

/// The parameters of one layer, sliced out of [`FlowModel::weights`].
struct LayerWeights<'a> {
    qkv: &'a [f32],
    qkv_bias: &'a [f32],
    out: &'a [f32],
    out_bias: &'a [f32],
    ln1: (&'a [f32], &'a [f32]),
    mlp1: &'a [f32],
    mlp1_bias: &'a [f32],
    mlp2: &'a [f32],
    mlp2_bias: &'a [f32],
    ln2: (&'a [f32], &'a [f32]),
}

impl<'a> LayerWeights<'a> {
    fn of(model: &'a FlowModel, layer: usize) -> LayerWeights<'a> {
        let cfg = model.config();
        let (d, f) = (cfg.d_model, cfg.hidden());
        let o = model.offsets();
        let w = &model.weights()[layer * o.stride..(layer + 1) * o.stride];
        LayerWeights {
            qkv: &w[o.qkv..o.qkv + 3 * d * d],
            qkv_bias: &w[o.qkv_bias..o.qkv_bias + 3 * d],
            out: &w[o.out..o.out + d * d],
            out_bias: &w[o.out_bias..o.out_bias + d],
            ln1: (&w[o.ln1_gain..o.ln1_gain + d], &w[o.ln1_bias..o.ln1_bias + d]),
            mlp1: &w[o.mlp1..o.mlp1 + d * f],
            mlp1_bias: &w[o.mlp1_bias..o.mlp1_bias + f],
            mlp2: &w[o.mlp2..o.mlp2 + f * d],
            mlp2_bias: &w[o.mlp2_bias..o.mlp2_bias + d],
            ln2: (&w[o.ln2_gain..o.ln2_gain + d], &w[o.ln2_bias..o.ln2_bias + d]),
        }
    }
}

/// Scores of 64 consecutive keys at once, `block[j] = (query · key[base + j]) · scale` (`keys` is
/// the head's keys transposed, `dh x stride`); returns the largest score in each of 4 lanes.
/// Each key's products are summed in the order the one-key loop sums them (`i` ascending, from
/// `-0.0` as `Iterator::sum`), so the scores are bit for bit the same; only the keys go side by
/// side, in SIMD lanes. The maximum is a comparison ([`greater`]).
#[inline(always)]
fn score_block(query: &[f32], keys: &[f32], stride: usize, base: usize, scale: f32, block: &mut [f32]) -> [f32; 4] {
    let (mut top, scale) = (F4::splat(f32::NEG_INFINITY), F4::splat(scale));
    for (part, dst) in block[..64].chunks_exact_mut(16).enumerate() {
        let mut acc = [F4::splat(-0.0); 4];
        for (i, &qi) in query.iter().enumerate() {
            let row = &keys[i * stride + base + part * 16..][..16];
            let qi = F4::splat(qi);
            for (a, k) in acc.iter_mut().zip(row.chunks_exact(4)) {
                *a = a.add(qi.mul(F4::load(k)));
            }
        }
        for (a, d) in acc.iter().zip(dst.chunks_exact_mut(4)) {
            let score = a.mul(scale);
            score.store(d);
            top = top.keep_greater(score);
        }
    }
    let mut lanes = [0.0; 4];
    top.store(&mut lanes);
    lanes
}

/// Words of an attention row with at least this many keys are scored 64 keys at a time (those
/// not allowed discarded); sparser ones key by key.
const BLOCK_WORD: u32 = 8;

/// One head's keys and values, as [`attend`] reads them.
struct HeadKv<'a> {
    /// The head's keys transposed (`dh x stride`, see [`transpose_keys`]).
    keys: &'a [f32],
    stride: usize,
    /// Key `k`'s key vector is `rows[k · row + d..][..dh]`, its value vector `rows[k · row +
    /// 2d..][..dh]` (`[Q | K | V]` rows from the head's first column).
    rows: &'a [f32],
    row: usize,
    d: usize,
}

impl<'a> HeadKv<'a> {
    /// Head `head`'s part of the transposed `keys` (`d x stride`) and of the `[Q | K | V]` rows.
    fn of(keys: &'a [f32], stride: usize, qkv: &'a [f32], head: usize, dh: usize) -> HeadKv<'a> {
        let d = keys.len() / stride;
        HeadKv {
            keys: &keys[head * dh * stride..(head + 1) * dh * stride],
            stride,
            rows: &qkv[head * dh..],
            row: 3 * d,
            d,
        }
    }

    fn key(&self, k: usize, dh: usize) -> &'a [f32] {
        &self.rows[k * self.row + self.d..][..dh]
    }

    fn value(&self, k: usize, dh: usize) -> &'a [f32] {
        &self.rows[k * self.row + 2 * self.d..][..dh]
    }
}

/// One head's attention for one query: a softmax over the keys `allowed` lets it read from `kv`,
/// the weighted values written to `out`. Returns `1 / Σ` with the normalised weights'
/// numerators left in `scores` (for recording), or `None` for a fully masked row, whose output is
/// 0 (FlexAttention's convention, no 0/0). `scores` holds 64 more than the row's keys: a word's
/// block of scores is written whole, then the allowed ones kept.
#[inline(never)] // one copy for the dense layer and the row-by-row one (the worker's size)
fn attend(
    query: &[f32],
    allowed: &[u64],
    kv: &HeadKv<'_>,
    scale: f32,
    out: &mut [f32],
    scores: &mut [f32],
) -> Option<f32> {
    let (keys, stride, dh) = (kv.keys, kv.stride, query.len());
    out.fill(0.0);
    let mut max = f32::NEG_INFINITY;
    let mut count = 0;
    for (w, &word) in allowed.iter().enumerate() {
        if word == 0 {
            continue;
        }
        let base = w * 64;
        if word.count_ones() >= BLOCK_WORD {
            let top = score_block(query, keys, stride, base, scale, &mut scores[count..]);
            if word == u64::MAX {
                max = top.iter().fold(max, |m, &t| greater(m, t));
                count += 64;
            } else {
                // The allowed keys' scores, moved down in place (the i-th from j >= i).
                let at = count;
                for j in Ones::new(std::slice::from_ref(&word)) {
                    let score = scores[at + j];
                    scores[count] = score;
                    count += 1;
                    max = greater(max, score);
                }
            }
        } else {
            for j in Ones::new(std::slice::from_ref(&word)) {
                let score = query.iter().zip(kv.key(base + j, dh)).map(|(a, b)| a * b).sum::<f32>() * scale;
                scores[count] = score;
                count += 1;
                max = greater(max, score);
            }
        }
    }
    if count == 0 {
        return None;
    }
    let scores = &mut scores[..count];
    scores.iter_mut().for_each(|s| *s = exp(*s - max)); // vectorised
    let sum = match out.len() {
        8 => weigh::<2>(scores, allowed, kv, out),
        _ => {
            let mut sum = 0.0;
            for (&e, k) in scores.iter().zip(Ones::new(allowed)) {
                sum += e;
                out.iter_mut().zip(kv.value(k, dh)).for_each(|(a, v)| *a += e * v);
            }
            sum
        }
    };
    let inv = 1.0 / sum;
    out.iter_mut().for_each(|a| *a *= inv);
    Some(inv)
}

/// [`attend`]'s weighted sum of values for a head width known at compile time (`4 · V`; the
/// default model's 8): the same operations in the same order, with `out` in SIMD registers.
/// Returns the weights' sum.
#[inline(always)]
fn weigh<const V: usize>(weights: &[f32], allowed: &[u64], kv: &HeadKv<'_>, out: &mut [f32]) -> f32 {
    let (mut sum, mut acc) = (0.0, [F4::splat(0.0); V]);
    for (&e, k) in weights.iter().zip(Ones::new(allowed)) {
        sum += e;
        let e = F4::splat(e);
        for (a, v) in acc.iter_mut().zip(kv.value(k, 4 * V).chunks_exact(4)) {
            *a = a.add(e.mul(F4::load(v)));
        }
    }
    for (a, o) in acc.iter().zip(out.chunks_exact_mut(4)) {
        a.store(o);
    }
    sum
}

/// The keys of `[Q | K | V]` rows (`n x 3d`) transposed into `keys` (`d x stride`, `stride` a
/// multiple of 64 at least `n`): `keys[c · stride + j]` is key `j`'s component `c`, so a head's
/// keys are `dh` consecutive rows and 64 keys' `i`-th components lie side by side for
/// [`score_block`]. Columns past `n` stay as they are (0).
fn transpose_keys(qkv: &[f32], d: usize, stride: usize, keys: &mut [f32]) {
    for (j, row) in qkv.chunks_exact(3 * d).enumerate() {
        put_key(row, d, stride, j, keys);
    }
}

/// Key `j`'s column of [`transpose_keys`]'s layout, from its `[Q | K | V]` row.
#[inline]
fn put_key(row: &[f32], d: usize, stride: usize, j: usize, keys: &mut [f32]) {
    for (c, &k) in row[d..2 * d].iter().enumerate() {
        keys[c * stride + j] = k;
    }
}

/// The padded length of a transposed key row: `n` rounded up to whole words.
fn key_stride(n: usize) -> usize {
    n.div_ceil(64) * 64
}

/// Everything after attention, in place on rows `x` (the residual input, `d` wide) given their
/// heads' outputs: output projection + residual, LayerNorm 1, MLP + residual, LayerNorm 2.
/// `hidden` is scratch of `rows x hidden` floats.
fn finish_rows(w: &LayerWeights<'_>, x: &mut [f32], heads_out: &[f32], hidden: &mut [f32], d: usize) {
    matmul(heads_out, w.out, w.out_bias, x, d, true);
    layer_norm(x, w.ln1.0, w.ln1.1);
    matmul(x, w.mlp1, w.mlp1_bias, hidden, d, false);
    hidden.iter_mut().for_each(|v| *v = gelu(*v));
    matmul(hidden, w.mlp2, w.mlp2_bias, x, w.mlp1_bias.len(), true);
    layer_norm(x, w.ln2.0, w.ln2.1);
}

/// One layer in place on `h` (`n x d`), every row. `probs`, when given, receives the sum over
/// heads of the attention probabilities (`n x n`).
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
    let w = LayerWeights::of(model, layer);
    matmul(h, w.qkv, w.qkv_bias, &mut s.qkv, d, false);
    let stride = key_stride(n);
    transpose_keys(&s.qkv, d, stride, &mut s.keys);
    let scale = 1.0 / (dh as f32).sqrt();
    for head in 0..cfg.heads {
        let mask = masks.mask(layer, head);
        let qo = head * dh;
        let qkv = &s.qkv;
        let kv = HeadKv::of(&s.keys, stride, qkv, head, dh);
        for q in 0..n {
            let out = &mut s.heads_out[q * d + head * dh..q * d + (head + 1) * dh];
            let query = &qkv[q * 3 * d + qo..q * 3 * d + qo + dh];
            let Some(inv) = attend(query, mask.row(q), &kv, scale, out, &mut s.scores) else {
                continue;
            };
            if let Some(probs) = probs.as_deref_mut() {
                for (i, k) in Ones::new(mask.row(q)).enumerate() {
                    probs[q * n + k] += s.scores[i] * inv;
                }
            }
        }
    }
    finish_rows(&w, h, &s.heads_out, &mut s.hidden, d);
}

/// The one-key-at-a-time attention [`attend`] replaced: each score a dot product summed in `i`
/// order, then the same softmax and weighted sum. Returns the output and the weights.
fn attend_key_by_key(
    query: &[f32],
    allowed: &[u64],
    key: &[Vec<f32>],
    value: &[Vec<f32>],
    scale: f32,
) -> (Vec<f32>, Vec<f32>) {
    let mut scores: Vec<f32> =
        Ones::new(allowed).map(|k| query.iter().zip(&key[k]).map(|(a, b)| a * b).sum::<f32>() * scale).collect();
    let max = scores.iter().fold(f32::NEG_INFINITY, |m, &s| m.max(s));
    scores.iter_mut().for_each(|s| *s = exp(*s - max));
    let mut out = vec![0f32; query.len()];
    let mut sum = 0.0;
    for (&e, k) in scores.iter().zip(Ones::new(allowed)) {
        sum += e;
        out.iter_mut().zip(&value[k]).for_each(|(a, v)| *a += e * v);
    }
    out.iter_mut().for_each(|a| *a *= 1.0 / sum);
    scores.iter_mut().for_each(|s| *s *= 1.0 / sum);
    (out, scores)
}

/// Test support, here so that the browser's tests run it on the wasm SIMD build too: [`attend`]
/// on `cases` random rows against the one-key-at-a-time attention it replaced, bit for bit. The
/// rows are causal prefixes (whole words and a partial last one), windows, and random rows from
/// nearly empty to nearly full, at head widths 1 to 16. Returns how many words went each way
/// (whole words, partial words in a block, key by key), or the first difference.
#[doc(hidden)]
pub fn attention_matches_key_by_key(cases: usize, seed: u64) -> Result<[usize; 3], String> {
    let mut rng = SplitMix64::new(seed);
    let mut paths = [0usize; 3];
    for case in 0..cases {
        let n = 1 + rng.below(300);
        let dh = [1, 4, 8, 16][rng.below(4)];
        let mut normal = || (rng.next_f64() * 6.0 - 3.0) as f32;
        let key: Vec<Vec<f32>> = (0..n).map(|_| (0..dh).map(|_| normal()).collect()).collect();
        let value: Vec<Vec<f32>> = (0..n).map(|_| (0..dh).map(|_| normal()).collect()).collect();
        let query: Vec<f32> = (0..dh).map(|_| normal()).collect();
        let (lo, hi) = (rng.below(n), rng.below(n + 1));
        let density = rng.below(65) as u64;
        let mut allowed = vec![0u64; n.div_ceil(64)];
        for k in 0..n {
            let set = match case % 3 {
                0 => k <= hi,
                1 => k >= lo && k <= lo.max(hi),
                _ => (rng.below(64) as u64) < density,
            };
            allowed[k / 64] |= u64::from(set) << (k % 64);
        }
        for &w in &allowed {
            paths[usize::from(w != u64::MAX) + usize::from(w.count_ones() < BLOCK_WORD)] += 1;
        }
        let stride = key_stride(n);
        let mut keys = vec![0f32; dh * stride];
        for (j, k) in key.iter().enumerate() {
            for (i, &x) in k.iter().enumerate() {
                keys[i * stride + j] = x;
            }
        }
        // Rows of [Q | K | V] with only K and V filled.
        let rows: Vec<f32> = key.iter().zip(&value).flat_map(|(k, v)| [&vec![0.0; dh][..], k, v].concat()).collect();
        let kv = HeadKv { keys: &keys, stride, rows: &rows, row: 3 * dh, d: dh };
        let scale = 1.0 / (dh as f32).sqrt();
        let (mut out, mut scores) = (vec![0f32; dh], vec![0f32; n + 64]);
        let got = attend(&query, &allowed, &kv, scale, &mut out, &mut scores);
        let (want_out, want) = attend_key_by_key(&query, &allowed, &key, &value, scale);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let same = match got {
            None => want.is_empty(),
            Some(inv) => {
                let probs: Vec<f32> = scores[..want.len()].iter().map(|s| s * inv).collect();
                bits(&out) == bits(&want_out) && bits(&probs) == bits(&want)
            }
        };
        if !same {
            return Err(format!("case {case} (n {n}, dh {dh}): attention differs from key by key"));
        }
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::FlowConfig;
    use crate::stack::{Layer, LayerStack};

    /// The dense reference: every row of every perturbed copy recomputed.
    fn dense(model: &FlowModel, masks: &FlowMasks) -> Vec<Vec<f32>> {
        let cfg = model.config();
        let (n, d) = (model.n(), cfg.d_model);
        let mut base = CpuFlowJob::new(model, masks);
        base.step(model, masks, 0);
        let mut s = Scratch::new(model);
        let mut influence = vec![vec![0f32; n * n]; cfg.layers];
        for k in 0..n {
            let mut h = model.inputs().to_vec();
            for (x, p) in h[k * d..(k + 1) * d].iter_mut().zip(model.perturbation()) {
                *x += p;
            }
            for (l, b) in base.base_states.iter().enumerate() {
                layer_forward(model, masks, l, &mut h, &mut s, None);
                for q in 0..n {
                    let sq: f32 =
                        h[q * d..(q + 1) * d].iter().zip(&b[q * d..(q + 1) * d]).map(|(x, y)| (x - y) * (x - y)).sum();
                    influence[l][q * n + k] = sq.sqrt();
                }
            }
        }
        influence
    }

    #[test]
    fn recomputing_only_the_reached_rows_is_bit_identical_to_the_dense_pass() {
        let mut rng = SplitMix64::new(77);
        for case in 0..24 {
            // Mostly small; every eighth case past one word of keys (whole words scored in a
            // block, transposed keys patched at a stride past 64).
            let n = if case % 8 == 7 { 65 + rng.below(70) } else { 1 + rng.below(14) };
            let heads = [1, 2, 4][rng.below(3)];
            let config = FlowConfig { d_model: 16, heads, layers: 1 + rng.below(4), seed: case };
            let density = rng.below(4);
            let random = |rng: &mut SplitMix64| BitMatrix::from_fn(n, |_, _| rng.below(8) < density);
            let masks = if rng.below(2) == 0 {
                FlowMasks::uniform(&random(&mut rng), &config)
            } else {
                // A stack whose layers have different masks per head (and empty rows).
                let layers = (0..1 + rng.below(3))
                    .map(|_| Layer { heads: (0..1 + rng.below(heads)).map(|_| random(&mut rng)).collect() })
                    .collect();
                FlowMasks::from_stack(&LayerStack::new(layers).expect("valid stack"), &config).expect("fits")
            };
            // Every third case a full or a window mask (of 2 + n / 2 keys): the dense and the
            // row-by-row layers.
            let masks = match case % 3 {
                0 => FlowMasks::uniform(&BitMatrix::ones(n), &config),
                1 => FlowMasks::uniform(&BitMatrix::from_fn(n, |q, k| q >= k && q - k < 2 + n / 2), &config),
                _ => masks,
            };
            let model = FlowModel::new(config, n).expect("valid");
            let sparse = run_flow(&model, &masks);
            let want = dense(&model, &masks);
            for (l, (a, b)) in sparse.influence.iter().zip(&want).enumerate() {
                let same = a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
                assert!(same, "case {case}, layer {}: sparse and dense influence differ", l + 1);
            }
        }
    }

    #[test]
    fn scoring_64_keys_side_by_side_is_bit_identical_to_key_by_key() {
        let paths = attention_matches_key_by_key(300, 31).unwrap_or_else(|e| panic!("{e}"));
        assert!(paths.iter().all(|&b| b > 50), "every path is exercised: {paths:?}");
    }

    /// Distance in units in the last place between `a` and the `f32` nearest to `want`.
    fn ulps(a: f32, want: f64) -> u32 {
        let w = want as f32;
        if a == w {
            return 0;
        }
        (a.to_bits() as i64 - w.to_bits() as i64).unsigned_abs() as u32
    }

    #[test]
    fn exp_is_within_two_ulp_everywhere_and_gelu_matches_its_tanh_form() {
        let mut rng = SplitMix64::new(5);
        let mut worst = 0;
        // Random arguments over the whole useful range, the softmax's [-30, 0] densely, and the
        // edges: subnormal results, the overflow threshold, round numbers.
        let mut xs: Vec<f32> = (0..200_000).map(|_| (rng.next_f64() * 193.0 - 104.0) as f32).collect();
        xs.extend((0..200_000).map(|_| (-rng.next_f64() * 30.0) as f32));
        xs.extend([0.0, -0.0, 1.0, -1.0, 0.5, -87.3, -88.0, -100.0, -103.0, 88.0, 88.72, -1e-8, 1e-8]);
        for &x in &xs {
            let (got, want) = (exp(x), (x as f64).exp());
            let u = ulps(got, want);
            worst = worst.max(u);
            assert!(u <= 2, "exp({x}) = {got:e}, want {want:e} ({u} ulp)");
        }
        assert!(exp(-104.5) == 0.0 && exp(-1e30) == 0.0, "exp underflows to 0");
        assert!(exp(89.0) == f32::INFINITY && exp(f32::INFINITY) == f32::INFINITY, "exp overflows");
        assert!(exp(f32::NAN).is_nan(), "exp(NaN) is NaN");
        assert!(worst >= 1, "the test reaches the polynomial's rounding ({worst} ulp)");
        for &x in &xs {
            let x = x / 10.0;
            let want =
                0.5 * x as f64 * (1.0 + (0.797_884_560_802_865_4 * (x as f64 + 0.044_715 * (x as f64).powi(3))).tanh());
            let got = gelu(x) as f64;
            assert!((got - want).abs() <= 4e-7 * (1.0 + want.abs()), "gelu({x}) = {got}, want {want}");
        }
    }
}
