//! [`FlowJob`]: one flow run in steps — the CPU measurement ([`CpuFlowJob`], one layer of one
//! pass per step), then the comparison with `R(L)` ([`ReportBuilder`], one layer per step).

use super::cpu::CpuFlowJob;
use super::{FlowMasks, FlowModel, FlowRaw, FlowReport, ReportBuilder};
use crate::job::{Job, Step};

/// A finished flow run: the measurements and their comparison with the theory.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowOutput {
    /// What the model measured.
    pub raw: FlowRaw,
    /// The per-layer comparison with `R(L)`.
    pub report: FlowReport,
}

/// Where a [`FlowJob`] stands.
enum Phase<'a> {
    /// The CPU path measures, one layer of one pass per step.
    Measure { model: &'a FlowModel, job: CpuFlowJob },
    /// The measurements are compared with `R(L)`, one layer per step.
    Compare(CompareJob),
    /// The output was handed over.
    Spent,
}

/// The comparison alone of measurements made elsewhere (the GPU, the browser's Web Workers)
/// with `R(L)`: one layer a step, `layers` steps. What [`FlowJob`] does once it has measured; a
/// caller that never measures itself (the web app) steps this, and links no forward pass.
pub struct CompareJob {
    /// The measurements and the report so far; `None` once handed over.
    state: Option<(FlowRaw, ReportBuilder)>,
    done: usize,
    total: usize,
}

impl CompareJob {
    /// The comparison of `raw` with `R(L)` of `masks` at `threshold`.
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn new(raw: FlowRaw, masks: &FlowMasks, threshold: f64) -> CompareJob {
        let builder = ReportBuilder::new(&raw, masks, threshold);
        CompareJob { state: Some((raw, builder)), done: 0, total: masks.layers() }
    }
}

impl Job for CompareJob {
    type Output = FlowOutput;

    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    fn step(&mut self) -> Step<FlowOutput> {
        if let Some((raw, builder)) = &mut self.state
            && builder.step(raw)
            && let Some((raw, builder)) = self.state.take()
        {
            return Step::Done(FlowOutput { raw, report: builder.finish() });
        }
        self.done = (self.done + 1).min(self.total);
        Step::Progress { done: self.done, total: self.total }
    }
}

/// A flow run as a [`Job`]: `Progress` counts layer steps (`layers · (n + 1)` of the CPU
/// measurement, when it runs here, then `layers` of the comparison), and the output is
/// [`cpu::run_flow`](super::cpu::run_flow)'s measurements with
/// [`FlowReport::with_threshold`]'s report.
///
/// # Examples
/// ```
/// use hasseflow_engine::BitMatrix;
/// use hasseflow_engine::flow::{FlowConfig, FlowJob, FlowMasks, FlowModel, FlowReport, cpu};
/// use hasseflow_engine::job::Job;
/// let config = FlowConfig { layers: 2, ..FlowConfig::default() };
/// let mask = BitMatrix::from_fn(5, |q, k| k <= q);
/// let (model, masks) = (FlowModel::new(config, 5).unwrap(), FlowMasks::uniform(&mask, &config));
/// let mut last = (0, 0);
/// let out = FlowJob::new(&model, &masks, 1e-9).run_observed(|done, total| last = (done, total));
/// // 2 layers of 6 passes, then 2 layers compared (the last step hands over the output).
/// assert_eq!(last, (2 * 6 + 1, 2 * 6 + 2));
/// assert_eq!(out.raw, cpu::run_flow(&model, &masks));
/// assert_eq!(out.report, FlowReport::new(&out.raw, &masks));
/// ```
pub struct FlowJob<'a> {
    masks: &'a FlowMasks,
    threshold: f64,
    phase: Phase<'a>,
    /// Layer steps done.
    done: usize,
    total: usize,
}

impl<'a> FlowJob<'a> {
    /// A run of `model` on `masks` on the CPU, compared at `threshold`; nothing is computed yet.
    ///
    /// # Panics
    /// If `masks` has a different size or layer count than `model` (build both from one config).
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn new(model: &'a FlowModel, masks: &'a FlowMasks, threshold: f64) -> FlowJob<'a> {
        let job = CpuFlowJob::new(model, masks);
        let total = job.total() + masks.layers();
        FlowJob { masks, threshold, phase: Phase::Measure { model, job }, done: 0, total }
    }

    /// The comparison of measurements made elsewhere (the GPU) with `R(L)` of `masks` at
    /// `threshold`: `layers` steps.
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn compare(raw: FlowRaw, masks: &'a FlowMasks, threshold: f64) -> FlowJob<'a> {
        let phase = Phase::Compare(CompareJob::new(raw, masks, threshold));
        FlowJob { masks, threshold, phase, done: 0, total: masks.layers() }
    }

    /// Whether the measurements are complete (only the comparison is left, or nothing).
    pub fn measured(&self) -> bool {
        !matches!(self.phase, Phase::Measure { .. })
    }
}

impl Job for FlowJob<'_> {
    type Output = FlowOutput;

    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    fn step(&mut self) -> Step<FlowOutput> {
        match &mut self.phase {
            Phase::Measure { model, job } => {
                if job.step_layers(model, self.masks, 1) {
                    let measured = std::mem::replace(&mut self.phase, Phase::Spent);
                    if let Phase::Measure { job, .. } = measured {
                        self.phase = Phase::Compare(CompareJob::new(job.finish(), self.masks, self.threshold));
                    }
                }
            }
            Phase::Compare(compare) => {
                if let Step::Done(out) = compare.step() {
                    self.phase = Phase::Spent;
                    return Step::Done(out);
                }
            }
            Phase::Spent => return Step::Progress { done: self.total, total: self.total },
        }
        self.done = (self.done + 1).min(self.total);
        Step::Progress { done: self.done, total: self.total }
    }
}
