//! The reach of one mask repeated, at a given depth or at the depth its limit needs.

use super::{IntervalRows, ReachError, ReachJob, ReachOptions, ReachReport, ReachStack, StructuredLayer};
use crate::job::{Job, Step};

/// Deepest stack [`reach_auto`] tries when no depth is given.
pub const MAX_AUTO_LAYERS: usize = 64;

/// The reach of `layers` copies of one mask given as interval rows, on the structured engine;
/// without `layers`, the depth doubles from 8 up to [`MAX_AUTO_LAYERS`] until `R(L)` reaches the
/// limit (`full_at` is then `L*`). `documents` are the lengths of the leak check (empty: one).
///
/// # Errors
/// `layers` outside `1..=16 · MAX_AUTO_LAYERS` ([`ReachError::Layers`]), or the engine's refusals.
pub fn reach_auto(rows: &IntervalRows, layers: Option<usize>, documents: &[u64]) -> Result<ReachReport, ReachError> {
    reach_auto_while(rows, layers, documents, || true).expect("a run that is never stopped ends")
}

/// [`reach_auto`] in steps (one layer each, [`ReachJob`]), asking `more()` before each step after
/// the first: `None` when `more()` said no (the caller was interrupted), else the report.
///
/// # Errors
/// As [`reach_auto`].
pub fn reach_auto_while(
    rows: &IntervalRows,
    layers: Option<usize>,
    documents: &[u64],
    mut more: impl FnMut() -> bool,
) -> Option<Result<ReachReport, ReachError>> {
    let n = rows.n() as u64;
    let mut run = |l: usize| -> Option<Result<ReachReport, ReachError>> {
        let stack = match ReachStack::new(n, vec![StructuredLayer::Intervals(rows.clone()); l], documents.to_vec()) {
            Ok(s) => s,
            Err(e) => return Some(Err(e)),
        };
        let mut job = match ReachJob::new(&stack, ReachOptions::default()) {
            Ok(j) => j,
            Err(e) => return Some(Err(e)),
        };
        match job.step_while(&mut more) {
            Step::Done(out) => Some(out),
            Step::Progress { .. } => None,
        }
    };
    if let Some(l) = layers {
        if l == 0 || l > MAX_AUTO_LAYERS * 16 {
            return Some(Err(ReachError::Layers { layers: l, max: MAX_AUTO_LAYERS * 16 }));
        }
        return run(l);
    }
    let mut l = 8;
    loop {
        let r = match run(l)? {
            Ok(r) => r,
            Err(e) => return Some(Err(e)),
        };
        if r.full_at.is_some() || l >= MAX_AUTO_LAYERS {
            return Some(Ok(r));
        }
        l *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BitMatrix;
    use crate::analysis::Analysis;

    #[test]
    fn reach_auto_doubles_until_the_limit_and_agrees_with_the_dense_depth() {
        // A window of 4 over 40 positions: L* = 13 (39 / 3 rounded up), found at 16 layers.
        let m = BitMatrix::from_fn(40, |q, k| k <= q && q - k < 4);
        let rows = IntervalRows::from_bitmatrix(&m.with_diagonal(), 8).expect("intervals");
        let r = reach_auto(&rows, None, &[]).expect("runs");
        assert_eq!(r.depth, 16);
        assert_eq!(r.full_at, Some(Analysis::new(&m).depth()));
        let short = reach_auto(&rows, Some(3), &[]).expect("runs");
        assert_eq!((short.depth, short.full_at), (3, None));
        assert!(reach_auto(&rows, Some(0), &[]).unwrap_err().to_string().contains("layers = 0"));
        // Stopped after its first step: no report; asked every step and never stopped: the same report.
        assert!(reach_auto_while(&rows, None, &[], || false).is_none());
        let mut asked = 0;
        let same = reach_auto_while(&rows, None, &[], || {
            asked += 1;
            true
        });
        assert_eq!(same.expect("not stopped").expect("runs"), r);
        assert!(asked >= 16, "asked between the layers of each run ({asked})");
    }
}
