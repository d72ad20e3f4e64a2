//! [`Job`]: the one shape of every long computation that runs in steps (the flow model and its
//! report, the structured reach engine, a model run), so that every shell drives them alike: the
//! CLI draws a progress bar from [`Step::Progress`], the web app yields to the browser between
//! steps and drops a job whose input changed, and a one-shot function is the job run to its end
//! ([`Job::run`]).
//!
//! A step does a bounded piece of work (one layer of one pass, one layer of the reach engine) and
//! reports how far the job is, or hands over its output. Errors are part of the output (e.g.
//! `Result<ReachReport, ReachError>`), so a failing step ends the job like a finished one.

/// What one [`Job::step`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step<T> {
    /// More to do: `done` of `total` units (layers, layer passes) are finished. `done` never
    /// decreases and never exceeds `total`; `total` is fixed once the first step has run.
    Progress {
        /// Units finished.
        done: usize,
        /// Units in all.
        total: usize,
    },
    /// The job's output; the job is spent.
    Done(T),
}

impl<T> Step<T> {
    /// `done / total` of a [`Step::Progress`] (0 for an empty total), 1 for [`Step::Done`].
    pub fn fraction(&self) -> f64 {
        match self {
            Step::Progress { done, total } if *total > 0 => *done as f64 / *total as f64,
            Step::Progress { .. } => 0.0,
            Step::Done(_) => 1.0,
        }
    }
}

/// A computation run in bounded steps.
///
/// Contract: every [`Job::step`] until the last returns [`Step::Progress`], its `done` never
/// falling and never above `total`; the last returns [`Step::Done`] with the output, which equals
/// the one-shot function's result whatever the caller did between steps. A spent job (after `Done`) does no more work: a
/// further step returns `Progress` with `done == total` and never a second output.
///
/// # Examples
/// ```
/// use hasseflow_engine::job::{Job, Step};
/// /// Sums `1..=n`, one term per step.
/// struct Sum { n: usize, i: usize, acc: usize }
/// impl Job for Sum {
///     type Output = usize;
///     fn step(&mut self) -> Step<usize> {
///         if self.i == self.n {
///             self.i += 1;
///             return Step::Done(self.acc);
///         }
///         if self.i < self.n {
///             self.i += 1;
///             self.acc += self.i;
///         }
///         Step::Progress { done: self.i.min(self.n), total: self.n }
///     }
/// }
/// let mut seen = Vec::new();
/// let out = Sum { n: 4, i: 0, acc: 0 }.run_observed(|done, total| seen.push((done, total)));
/// assert_eq!(out, 10);
/// assert_eq!(seen, [(1, 4), (2, 4), (3, 4), (4, 4)]);
/// assert_eq!(Sum { n: 4, i: 0, acc: 0 }.run(), 10);
/// ```
pub trait Job {
    /// What the finished job hands over (errors included).
    type Output;

    /// Does one bounded piece of work.
    fn step(&mut self) -> Step<Self::Output>;

    /// Steps to the end, calling `progress(done, total)` after every step that is not the last.
    fn run_observed(mut self, mut progress: impl FnMut(usize, usize)) -> Self::Output
    where
        Self: Sized,
    {
        loop {
            match self.step() {
                Step::Progress { done, total } => progress(done, total),
                Step::Done(out) => return out,
            }
        }
    }

    /// Steps to the end: the one-shot result.
    fn run(self) -> Self::Output
    where
        Self: Sized,
    {
        self.run_observed(|_, _| {})
    }

    /// Steps while `more()` allows (asked before each step after the first), for a caller that
    /// works in slices (the web app: until its time slice is used). Returns the last step's
    /// answer: [`Step::Done`] with the output, or how far the job is.
    fn step_while(&mut self, mut more: impl FnMut() -> bool) -> Step<Self::Output> {
        loop {
            let step = self.step();
            if matches!(step, Step::Done(_)) || !more() {
                return step;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three units, then the output; counts its steps.
    struct Three {
        at: usize,
        steps: usize,
    }

    impl Job for Three {
        type Output = &'static str;
        fn step(&mut self) -> Step<&'static str> {
            self.steps += 1;
            if self.at == 3 {
                self.at = 4;
                return Step::Done("three");
            }
            self.at = (self.at + 1).min(3);
            Step::Progress { done: self.at, total: 3 }
        }
    }

    #[test]
    fn step_while_stops_when_asked_or_done() {
        let mut job = Three { at: 0, steps: 0 };
        let mut budget = 1;
        let first = job.step_while(|| {
            budget -= 1;
            budget >= 0
        });
        assert_eq!(first, Step::Progress { done: 2, total: 3 }, "one step, then one more allowed");
        assert_eq!(job.steps, 2);
        assert_eq!(job.step_while(|| true), Step::Done("three"));
        assert_eq!(job.steps, 4);
        assert_eq!(job.step(), Step::Progress { done: 3, total: 3 }, "a spent job hands nothing over again");
    }

    #[test]
    fn fraction_of_a_step() {
        assert_eq!(Step::<()>::Progress { done: 1, total: 4 }.fraction(), 0.25);
        assert_eq!(Step::<()>::Progress { done: 0, total: 0 }.fraction(), 0.0);
        assert_eq!(Step::Done(()).fraction(), 1.0);
    }
}
