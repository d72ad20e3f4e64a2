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
