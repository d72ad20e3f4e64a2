//! The [`Job`] contract, checked while a job runs: `Progress` until the last step, `done` never
//! falling and never above a fixed `total`, then `Done`; a spent job hands nothing over again.

use hasseflow_core::job::{Job, Step};

/// Steps `job` to its end checking the contract; the output and every `(done, total)` seen.
pub fn drive<J: Job>(mut job: J, what: &str) -> (J::Output, Vec<(usize, usize)>) {
    let mut seen: Vec<(usize, usize)> = Vec::new();
    loop {
        match job.step() {
            Step::Progress { done, total } => {
                assert!(done <= total, "{what}: {done} of {total}");
                if let Some(&(d, t)) = seen.last() {
                    assert!(done >= d && total == t, "{what}: ({d}, {t}) then ({done}, {total})");
                }
                seen.push((done, total));
                assert!(seen.len() <= 1 << 20, "{what}: the job never ends");
            }
            Step::Done(out) => {
                let total = seen.last().map_or(0, |&(_, t)| t);
                let again = job.step();
                assert!(
                    matches!(again, Step::Progress { done, total: t } if done == total && t == total),
                    "{what}: spent"
                );
                return (out, seen);
            }
        }
    }
}
