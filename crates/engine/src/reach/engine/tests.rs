//! Unit tests of the step paths.

use super::*;
use crate::rng::SplitMix64;

/// The deque path (non-monotone rows, sliding query ranges) and the O(1) path against the
/// segment tree.
#[test]
fn single_paths_match_the_general_path() {
    let mut rng = SplitMix64::new(9);
    for case in 0..200 {
        let n = 1 + rng.below(300);
        let lo: Vec<u32> = (0..n).map(|q| (q - rng.below(q + 1).min(rng.below(20))) as u32).collect();
        let hi: Vec<u32> = (0..n).map(|q| (q + rng.below(n - q).min(rng.below(20))) as u32).collect();
        let mono = is_mono(&lo, &hi);
        let prev = Rows::Single { lo: lo.clone(), hi: hi.clone(), mono };
        let w = 1 + rng.below(30) as u32;
        let qa: Vec<u32> = (0..n as u32).map(|q| q.saturating_sub(w)).collect();
        let qb: Vec<u32> = (0..n as u32).map(|q| (q + rng.below(2) as u32 * w / 2).min(n as u32 - 1)).collect();
        let mut qb_mono = qb.clone();
        for i in 1..n {
            qb_mono[i] = qb_mono[i].max(qb_mono[i - 1]);
        }
        let adj = Rows::Single { lo: qa.clone(), hi: qb_mono.clone(), mono: true };
        let fast =
            step_single(n, |q| (qa[q], qb_mono[q]), &lo, &hi, mono, Default::default()).expect("monotone queries");
        let general = step_general(Adj::Rows(&adj), &prev).expect("small");
        assert_eq!(fast.to_interval_rows(), general.to_interval_rows(), "case {case}");
        if !mono {
            let direct_wrong = step_single(n, |q| (qa[q], qb_mono[q]), &lo, &hi, false, Default::default());
            assert!(direct_wrong.is_some());
        }
    }
}

/// Random single-interval rows with non-decreasing ends, each containing its position.
fn mono_rows(rng: &mut SplitMix64, n: usize) -> (Vec<u32>, Vec<u32>) {
    let mut lo = vec![0u32; n];
    for q in 1..n {
        lo[q] = lo[q - 1] + rng.below(q - lo[q - 1] as usize + 1) as u32;
    }
    let mut hi = vec![n as u32 - 1; n];
    for q in (0..n - 1).rev() {
        hi[q] = q as u32 + rng.below(hi[q + 1] as usize - q + 1) as u32;
    }
    (lo, hi)
}

/// The in-place step (every model run's layers) against the segment tree, with documents and
/// with windows and chunks from 1 to far beyond the context (up to `u64::MAX`, where a sum of
/// positions and windows would overflow a 32-bit `usize` without the clamping).
#[test]
fn the_in_place_rule_step_matches_the_general_path() {
    use crate::pattern::Overlays;
    let mut rng = SplitMix64::new(19);
    for case in 0..400 {
        let n = 1 + rng.below(120);
        let size = match rng.below(4) {
            0 => [u64::MAX, u32::MAX as u64, u32::MAX as u64 - 1, 1 << 32][rng.below(4)],
            1 => n as u64 + rng.below(3) as u64,
            _ => 1 + rng.below(n + 1) as u64,
        };
        let kind = match rng.below(4) {
            0 => LayerKind::Sliding { window: size },
            1 => LayerKind::Chunked { size },
            2 => LayerKind::Full,
            _ => LayerKind::Linear,
        };
        let mut docs = Vec::new();
        let mut left = n as u64;
        while left > 1 && rng.below(3) > 0 {
            let d = 1 + rng.below(left as usize - 1) as u64;
            docs.push(d);
            left -= d;
        }
        if !docs.is_empty() {
            docs.push(left);
        }
        let rule = RuleLayer::new(kind, rng.below(2) == 0, Overlays { docs, ..Overlays::default() });
        let ctx = RuleCtx::new(n, 1, &rule, &mut None, &mut None).expect("valid rule");
        let (lo, hi) = mono_rows(&mut rng, n);
        let prev = Rows::Single { lo: lo.clone(), hi: hi.clone(), mono: true };
        let general = step_general(Adj::Rule(&ctx), &prev).expect("small");
        let (mut ilo, mut ihi) = (lo.clone(), hi.clone());
        let mono = rule_mono_in_place(&ctx, &mut ilo, &mut ihi);
        let in_place = Rows::Single { lo: ilo, hi: ihi, mono };
        assert_eq!(in_place.to_interval_rows(), general.to_interval_rows(), "case {case}: {rule:?}");
        assert!(mono, "case {case}: non-decreasing rows stay non-decreasing");
        let copied = step_rule_mono(&ctx, &lo, &hi, Default::default());
        assert_eq!(copied.to_interval_rows(), general.to_interval_rows(), "case {case}");
    }
}

/// `close`'s one pass over non-decreasing rows against squaring to the fixpoint, on rows with
/// long chains (narrow rows over thousands of positions) and short ones.
#[test]
fn closing_in_one_pass_is_squaring_to_the_fixpoint() {
    use super::limit::{close, close_by_squaring};
    let mut rng = SplitMix64::new(23);
    for case in 0..300 {
        let n = 1 + rng.below(if case % 10 == 0 { 5000 } else { 200 });
        let (lo, hi) = mono_rows(&mut rng, n);
        // Narrow rows: each end moves at most a few positions, so the closure takes many steps.
        let (lo, hi): (Vec<u32>, Vec<u32>) = if case % 2 == 0 {
            let w = 1 + rng.below(4) as u32;
            (
                (0..n as u32).map(|q| lo[q as usize].max(q.saturating_sub(w))).collect(),
                (0..n as u32).map(|q| hi[q as usize].min(q + w)).collect(),
            )
        } else {
            (lo, hi)
        };
        let rows = Rows::Single { lo, hi, mono: true };
        let want = close_by_squaring(rows.clone()).expect("small").to_interval_rows();
        let got = close(rows).expect("small");
        assert!(matches!(got, Rows::Single { mono: true, .. }), "case {case}: still non-decreasing rows");
        assert_eq!(got.to_interval_rows(), want, "case {case} (n = {n})");
    }
}

/// The vectorised statistics (chunks of lanes, run extension a chunk at a time) against a plain
/// count row by row, on rows whose lookbacks form long runs, short runs and no runs, over several
/// documents, with the frozen prefixes on and off.
#[test]
fn chunked_statistics_match_a_row_by_row_count() {
    use super::stats::{Frozen, Lookbacks, stats_frozen};
    let mut rng = SplitMix64::new(29);
    for case in 0..300 {
        let n = 1 + rng.below(400);
        let (lo, hi) = mono_rows(&mut rng, n);
        // Lookbacks in long arithmetic runs: a sliding window's rows on part of the cases.
        let (lo, hi): (Vec<u32>, Vec<u32>) = match case % 3 {
            0 => {
                let w = rng.below(40) as u32;
                ((0..n as u32).map(|q| q.saturating_sub(w)).collect(), (0..n as u32).collect())
            }
            _ => (lo, hi),
        };
        let (llo, lhi) = if rng.below(2) == 0 { (vec![0; n], vec![n as u32 - 1; n]) } else { (lo.clone(), hi.clone()) };
        let docs = if n > 2 && rng.below(2) == 0 {
            let cut = 1 + rng.below(n - 1) as u32;
            vec![(0, cut - 1), (cut, n as u32 - 1)]
        } else {
            vec![(0, n as u32 - 1)]
        };
        let rows = Rows::Single { lo: lo.clone(), hi: hi.clone(), mono: true };
        let limit = Rows::Single { lo: llo.clone(), hi: lhi.clone(), mono: true };
        let mut lbs = Lookbacks::new(n);
        let mut frozen = Frozen::new(docs.len(), n);
        let st = stats_frozen(&rows, &limit, &docs, &mut lbs, (case % 2 == 0).then_some(&mut frozen));
        let (mut cells, mut leaking, mut short, mut all) = (0u64, 0u64, 0u64, Vec::new());
        for &(ds, de) in &docs {
            for q in ds..=de {
                let (l, h) = (lo[q as usize], hi[q as usize]);
                cells += (h - l) as u64 + 1;
                leaking += (l < ds || h > de) as u64;
                short += (h - l != lhi[q as usize] - llo[q as usize]) as u64;
                all.push((q - l).max(h - q));
            }
        }
        all.sort_unstable();
        assert_eq!((st.cells, st.leaking, st.short), (cells, leaking, short), "case {case}");
        let lb = st.lookback;
        let want = (all[0] as u64, all[n - 1] as u64, all[(n - 1) / 2] as u64);
        assert_eq!((lb.min, lb.max, lb.median), want, "case {case}");
    }
}
