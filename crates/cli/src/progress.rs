//! Progress on stderr for long runs (`flow`, `model`), drawn only when stderr is a terminal and
//! the report is text: with `--json`, in pipes and in tests nothing extra is written.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Whether to draw progress: text output and stderr a terminal.
pub(crate) fn wanted(json: bool) -> bool {
    !json && std::io::stderr().is_terminal()
}

/// A bar of `len` steps with `what` in front (hidden unless `show`).
pub(crate) fn bar(show: bool, len: u64, what: &str) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let style = ProgressStyle::with_template("{msg} [{bar:32}] {pos}/{len} ({elapsed}, about {eta} left)")
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    let bar = ProgressBar::new(len).with_style(style).with_message(what.to_string());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// What a [`Job`](hasseflow_core::Job)'s progress does to `bar`: `Job::run_observed(follow(&bar))`
/// (or a core function taking the same callback) draws its steps, `done` of `total`.
pub(crate) fn follow(bar: &ProgressBar) -> impl FnMut(usize, usize) + '_ {
    |done, total| {
        if bar.length() != Some(total as u64) {
            bar.set_length(total as u64);
        }
        bar.set_position(done as u64);
    }
}

/// A spinner for a step whose progress is not known (hidden unless `show`).
pub(crate) fn spinner(show: bool, what: &str) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let style = ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    let bar = ProgressBar::new_spinner().with_style(style).with_message(what.to_string());
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

#[cfg(test)]
mod tests {
    use super::*;
    use hasseflow_core::job::{Job, Step};

    /// Five units of work, one per step.
    struct Five(usize);

    impl Job for Five {
        type Output = &'static str;
        fn step(&mut self) -> Step<&'static str> {
            if self.0 == 5 {
                return Step::Done("done");
            }
            self.0 += 1;
            Step::Progress { done: self.0, total: 5 }
        }
    }

    /// A bar following a job ends at the job's total, whatever length it was made with, and the
    /// job's output comes through unchanged.
    #[test]
    fn a_bar_follows_a_job_to_its_total() {
        let bar = ProgressBar::hidden();
        bar.set_length(99);
        let mut positions = Vec::new();
        let mut follow = follow(&bar);
        let out = Five(0).run_observed(|done, total| {
            follow(done, total);
            positions.push(bar.position());
        });
        assert_eq!(out, "done");
        assert_eq!(bar.length(), Some(5));
        assert_eq!(positions, [1, 2, 3, 4, 5]);
    }
}
