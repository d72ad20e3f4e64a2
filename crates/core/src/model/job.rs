//! [`ModelJob`]: a model run in steps (the reach engine's limit, then one layer per step), the one
//! path of [`ModelRun::compute`] and of the app, which yields to the browser between steps.

use super::ModelRun;
use crate::job::{Job, Step};
use crate::pattern::{ModelSpec, Overlays};
use crate::reach::{ReachError, ReachJob, ReachOptions, ReachStack};

/// A model run as a [`Job`]: `Progress { done: layers, total: depth }` after the limit and after
/// each layer, then the [`ModelRun`] (each layer named by the spec) or the engine's error.
///
/// # Examples
/// ```
/// use hasseflow_core::job::{Job, Step};
/// use hasseflow_core::model::{MAX_RUN_BYTES, ModelJob, ModelRun, load_gallery};
/// use hasseflow_core::pattern::Overlays;
/// let spec = load_gallery("mistral-7b-v0.1").unwrap();
/// let stack = ModelRun::stack(&spec, 8192, &Overlays::default(), 1, MAX_RUN_BYTES).unwrap();
/// let mut job = ModelJob::new(&stack, "gallery".into(), spec.clone(), 8192, Overlays::default(), &[8191]).unwrap();
/// let mut last = 0;
/// let run = loop {
///     match job.step() {
///         Step::Progress { done, total } => {
///             assert!(done >= last && total == 32);
///             last = done;
///         }
///         Step::Done(run) => break run.unwrap(),
///     }
/// };
/// assert_eq!(last, 32);
/// assert_eq!(run, ModelRun::compute("gallery".into(), spec, 8192, Overlays::default(), &[8191]).unwrap());
/// ```
pub struct ModelJob<'a> {
    reach: ReachJob<'a>,
    /// What the run reports besides the engine's report; taken when the job is done.
    run: Option<(String, ModelSpec, u64, Overlays)>,
}

impl<'a> ModelJob<'a> {
    /// A run over `stack` (from [`ModelRun::stack`] of `spec`, `n` and `overlays`) reporting the
    /// rows of `queries`; nothing is computed yet.
    ///
    /// # Errors
    /// [`ReachError::QueryOutOfRange`] for a query outside `0..n`.
    pub fn new(
        stack: &'a ReachStack,
        source: String,
        spec: ModelSpec,
        n: u64,
        overlays: Overlays,
        queries: &[u64],
    ) -> Result<ModelJob<'a>, ReachError> {
        let reach = ReachJob::new(stack, ReachOptions { queries: queries.to_vec(), ..ReachOptions::default() })?;
        Ok(ModelJob { reach, run: Some((source, spec, n, overlays)) })
    }

    /// Number of layers.
    pub fn depth(&self) -> usize {
        self.reach.depth()
    }
}

impl Job for ModelJob<'_> {
    type Output = Result<ModelRun, ReachError>;

    fn step(&mut self) -> Step<Self::Output> {
        match Job::step(&mut self.reach) {
            Step::Progress { done, total } => Step::Progress { done, total },
            Step::Done(report) => match self.run.take() {
                Some((source, spec, n, overlays)) => {
                    Step::Done(report.map(|r| ModelRun::from_report(source, spec, n, overlays, r)))
                }
                None => Step::Progress { done: self.depth(), total: self.depth() },
            },
        }
    }
}
