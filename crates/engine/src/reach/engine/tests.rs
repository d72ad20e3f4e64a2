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
