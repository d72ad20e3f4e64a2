//! Per-layer statistics: cells, lookbacks, leaks, queries short of the limit.

use super::*;

pub(super) struct Stats {
    pub(super) cells: u64,
    pub(super) lookback: Lookback,
    pub(super) leaking: u64,
    pub(super) short: u64,
}

/// Collects the lookbacks of one layer as runs of constant or `+1`-stepping values (structured
/// layers give a handful of runs), falling back to the plain values when runs get many.
pub(super) struct Lookbacks {
    /// `(start value, length, step 0 or 1)`.
    pub(super) runs: Vec<(u32, u32, u32)>,
    pub(super) cur: (u32, u32, u32),
    pub(super) values: Vec<u32>,
    pub(super) plain: bool,
    pub(super) limit: usize,
    /// The number of values a layer has (`n`): the plain values are allocated once, exactly.
    pub(super) n: usize,
}

impl Lookbacks {
    pub(super) fn new(n: usize) -> Lookbacks {
        Lookbacks { runs: Vec::new(), cur: (0, 0, 0), values: Vec::new(), plain: false, limit: n / 16 + 16, n }
    }

    pub(super) fn reset(&mut self) {
        self.runs.clear();
        self.values.clear();
        self.cur = (0, 0, 0);
        self.plain = false;
    }

    #[inline]
    pub(super) fn push(&mut self, v: u32) {
        if self.plain {
            self.values.push(v);
            return;
        }
        let (start, len, step) = self.cur;
        if len == 0 {
            self.cur = (v, 1, 0);
        } else if len == 1 && (v == start || v == start + 1) {
            self.cur = (start, 2, v - start);
        } else if v as u64 == start as u64 + step as u64 * len as u64 {
            self.cur.1 += 1;
        } else {
            if self.runs.len() == self.runs.capacity() {
                // Doubling, but never past the most runs kept before they turn plain, so the
                // runs hold at most `limit + 1` entries (and twice that while they move).
                let len = self.runs.len();
                self.runs.reserve_exact((2 * len).clamp(4, self.limit + 1).max(len + 1) - len);
            }
            self.runs.push(self.cur);
            self.cur = (v, 1, 0);
            if self.runs.len() > self.limit {
                self.plain = true;
                self.values.reserve_exact(self.n.saturating_sub(self.values.len()));
                for &(s, l, st) in &self.runs {
                    self.values.extend((0..l).map(|i| s + st * i));
                }
                // Released, not kept: the plain values replace them for this layer.
                self.runs = Vec::new();
            }
        }
    }

    /// The lower median (rank `⌊(len-1)/2⌋`), with every value in `min..=max`.
    pub(super) fn median(&mut self, min: u32, max: u32) -> u32 {
        if self.plain {
            let (s, l, st) = self.cur;
            self.values.extend((0..l).map(|i| s + st * i));
            if self.values.is_empty() {
                return 0;
            }
            let mid = (self.values.len() - 1) / 2;
            return *self.values.select_nth_unstable(mid).1;
        }
        if self.cur.1 > 0 {
            self.runs.push(self.cur);
            self.cur = (0, 0, 0);
        }
        let total: u64 = self.runs.iter().map(|r| r.1 as u64).sum();
        if total == 0 {
            return 0;
        }
        let mid = (total - 1) / 2;
        let at_most = |x: u32| -> u64 {
            self.runs
                .iter()
                .map(|&(s, l, st)| {
                    if x < s {
                        0
                    } else if st == 0 {
                        l as u64
                    } else {
                        ((x - s) as u64 + 1).min(l as u64)
                    }
                })
                .sum()
        };
        // Smallest x with more than `mid` values at most x.
        let (mut lo, mut hi) = (min, max);
        while lo < hi {
            let m = lo + (hi - lo) / 2;
            if at_most(m) > mid { hi = m } else { lo = m + 1 }
        }
        lo
    }
}

pub(super) fn stats(rows: &Rows, limit: &Rows, docs: &[(u32, u32)], lbs: &mut Lookbacks) -> Stats {
    lbs.reset();
    let (mut cells, mut leaking, mut short) = (0u64, 0u64, 0u64);
    let (mut lmin, mut lmax) = (u32::MAX, 0u32);
    match (rows, limit) {
        (Rows::Single { lo, hi, .. }, Rows::Single { lo: llo, hi: lhi, .. }) => {
            for &(ds, de) in docs {
                let (ds_, de_) = (ds as usize, de as usize + 1);
                let (lo, hi, llo, lhi) = (&lo[ds_..de_], &hi[ds_..de_], &llo[ds_..de_], &lhi[ds_..de_]);
                // Counts first, in a loop without branches (it vectorises)...
                for (q, (((&l, &h), &ll), &lh)) in (ds..).zip(lo.iter().zip(hi).zip(llo).zip(lhi)) {
                    cells += (h - l) as u64 + 1;
                    let lb = (q - l).max(h - q);
                    lmin = lmin.min(lb);
                    lmax = lmax.max(lb);
                    leaking += (l < ds || h > de) as u64;
                    short += (h - l != lh - ll) as u64;
                }
                // ...then the lookbacks' runs: most rows extend the current arithmetic run, on a
                // local copy (in registers); the others go through `push`.
                let mut cur = lbs.cur;
                let next = |c: (u32, u32, u32)| c.0 as u64 + c.2 as u64 * c.1 as u64;
                let mut expect = if cur.1 >= 2 { next(cur) } else { u64::MAX };
                for (q, (&l, &h)) in (ds..).zip(lo.iter().zip(hi)) {
                    let lb = (q - l).max(h - q);
                    if lb as u64 == expect {
                        cur.1 += 1;
                        expect += cur.2 as u64;
                    } else {
                        lbs.cur = cur;
                        lbs.push(lb);
                        cur = lbs.cur;
                        expect = if cur.1 >= 2 { next(cur) } else { u64::MAX };
                    }
                }
                lbs.cur = cur;
            }
        }
        _ => {
            for &(ds, de) in docs {
                for q in ds..=de {
                    let i = q as usize;
                    let (l, h) = rows.min_max(i);
                    let c = rows.row_cells(i);
                    cells += c;
                    let lb = (q - l).max(h - q);
                    lmin = lmin.min(lb);
                    lmax = lmax.max(lb);
                    lbs.push(lb);
                    leaking += (l < ds || h > de) as u64;
                    short += (c < limit.row_cells(i)) as u64;
                }
            }
        }
    }
    if lmin > lmax {
        lmin = 0;
    }
    let median = lbs.median(lmin, lmax);
    Stats { cells, lookback: Lookback { min: lmin as u64, median: median as u64, max: lmax as u64 }, leaking, short }
}
