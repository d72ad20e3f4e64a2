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
