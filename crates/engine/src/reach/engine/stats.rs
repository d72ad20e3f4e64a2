//! Per-layer statistics: cells, lookbacks, leaks, queries short of the limit.

use super::*;

#[derive(Clone, Copy)]
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
            self.spill_if_many();
        }
    }

    /// Turns the runs into plain values once they are more than `limit`.
    fn spill_if_many(&mut self) {
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

    /// Adds a whole run `(start, length, step)` of values (in any order with the others: the
    /// median counts them as a multiset).
    pub(super) fn push_run(&mut self, run: (u32, u32, u32)) {
        let (s, l, st) = run;
        if self.plain {
            self.values.extend((0..l).map(|i| s + st * i));
            return;
        }
        if self.runs.len() == self.runs.capacity() {
            let len = self.runs.len();
            self.runs.reserve_exact((2 * len).clamp(4, self.limit + 1).max(len + 1) - len);
        }
        self.runs.push(run);
        self.spill_if_many();
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

/// The rows that equal their limit rows, as a prefix per document: they stay so in every later
/// layer (`R(l-1) ⊆ R(l) ⊆ limit`), so their share of a layer's statistics is kept here once and
/// they are never scanned (nor, by [`super::rule_mono_in_place_from`], moved) again.
pub(super) struct Frozen {
    /// Per document (the leak check's), the number of frozen rows from its start.
    pub(super) len: Vec<u32>,
    cells: u64,
    leaking: u64,
    lmin: u32,
    lmax: u32,
    /// The frozen rows' lookbacks as `(start, length, step)` runs.
    runs: Vec<(u32, u32, u32)>,
    /// Most runs kept; past it no more rows freeze (they are scanned instead).
    cap: usize,
}

impl Frozen {
    pub(super) fn new(docs: usize, n: usize) -> Frozen {
        Frozen {
            len: vec![0; docs],
            cells: 0,
            leaking: 0,
            lmin: u32::MAX,
            lmax: 0,
            runs: Vec::new(),
            cap: frozen_runs_cap(n as u64) as usize,
        }
    }

    /// Adds a frozen row's lookback; false (and nothing added) when the runs are full.
    #[inline]
    fn push(&mut self, v: u32) -> bool {
        if let Some(r) = self.runs.last_mut() {
            if r.1 == 1 && (v == r.0 || v == r.0 + 1) {
                *r = (r.0, 2, v - r.0);
                return true;
            }
            if v as u64 == r.0 as u64 + r.2 as u64 * r.1 as u64 {
                r.1 += 1;
                return true;
            }
        }
        if self.runs.len() >= self.cap {
            return false;
        }
        self.runs.push((v, 1, 0));
        true
    }
}

/// Most lookback runs [`Frozen`] keeps for a run over `n` positions (`n / 1024 + 16`, 12 B each:
/// one per document is what a packed run needs).
pub(crate) fn frozen_runs_cap(n: u64) -> u64 {
    n / 1024 + 16
}

/// The value that extends the arithmetic run `cur` (`u64::MAX`, which no lookback equals, while
/// it has fewer than two values and so no step yet).
#[inline(always)]
fn next_of(cur: (u32, u32, u32)) -> u64 {
    if cur.1 >= 2 { cur.0 as u64 + cur.2 as u64 * cur.1 as u64 } else { u64::MAX }
}

/// Adds lookback `lb` to the run kept in registers (`cur`, with `expect` its next value), or
/// through [`Lookbacks::push`] when it does not extend it.
#[inline(always)]
fn track(lbs: &mut Lookbacks, cur: &mut (u32, u32, u32), expect: &mut u64, lb: u32) {
    if lb as u64 == *expect {
        cur.1 += 1;
        *expect += cur.2 as u64;
    } else {
        lbs.cur = *cur;
        lbs.push(lb);
        *cur = lbs.cur;
        *expect = next_of(*cur);
    }
}

pub(super) fn stats(rows: &Rows, limit: &Rows, docs: &[(u32, u32)], lbs: &mut Lookbacks) -> Stats {
    stats_frozen(rows, limit, docs, lbs, None)
}

/// [`stats`], with the rows frozen so far counted from `frozen` and the rows that newly equal
/// their limit rows at the start of a document's unfrozen part added to it.
pub(super) fn stats_frozen(
    rows: &Rows,
    limit: &Rows,
    docs: &[(u32, u32)],
    lbs: &mut Lookbacks,
    mut frozen: Option<&mut Frozen>,
) -> Stats {
    lbs.reset();
    let (mut cells, mut leaking, mut short) = (0u64, 0u64, 0u64);
    let (mut lmin, mut lmax) = (u32::MAX, 0u32);
    match (rows, limit) {
        (Rows::Single { lo, hi, .. }, Rows::Single { lo: llo, hi: lhi, .. }) => {
            for (d, &(ds, de)) in docs.iter().enumerate() {
                let mut start = ds as usize;
                let end = de as usize + 1;
                if let Some(f) = frozen.as_deref_mut() {
                    // Rows already frozen, then the rows that newly equal their limit rows.
                    start += f.len[d] as usize;
                    while start < end {
                        let (l, h) = (lo[start], hi[start]);
                        if h - l != lhi[start] - llo[start] {
                            break;
                        }
                        let q = start as u32;
                        let lb = (q - l).max(h - q);
                        if !f.push(lb) {
                            break;
                        }
                        f.cells += (h - l) as u64 + 1;
                        f.lmin = f.lmin.min(lb);
                        f.lmax = f.lmax.max(lb);
                        f.leaking += (l < ds || h > de) as u64;
                        start += 1;
                    }
                    f.len[d] = (start - ds as usize) as u32;
                }
                let (lo, hi, llo, lhi) = (&lo[start..end], &hi[start..end], &llo[start..end], &lhi[start..end]);
                // One pass: the counts, and the lookbacks' runs. The rows go in chunks of
                // `LANES`, counted per lane so that the loop vectorises (wasm's 128-bit SIMD too);
                // a chunk whose lookbacks all extend the current arithmetic run (most of them)
                // extends it at once, the others go row by row through `track`.
                const LANES: usize = 16;
                let mut cur = lbs.cur;
                let mut expect = next_of(cur);
                let whole = lo.len() - lo.len() % LANES;
                // Row widths `h - l` (the `+ 1`s are the rows' count) in 32-bit lanes with a carry
                // count per lane: a sum of 64-bit lanes does not vectorise on every target.
                let (mut width_v, mut carry_v) = ([0u32; LANES], [0u32; LANES]);
                let (mut min_v, mut max_v) = ([u32::MAX; LANES], [0u32; LANES]);
                let (mut leak_v, mut short_v) = ([0u32; LANES], [0u32; LANES]);
                let mut lb_c = [0u32; LANES];
                for c in (0..whole).step_by(LANES) {
                    let chunk = |v: &[u32]| -> [u32; LANES] { v[c..c + LANES].try_into().expect("a whole chunk") };
                    let (l, h, ll, lh) = (chunk(lo), chunk(hi), chunk(llo), chunk(lhi));
                    let q0 = (start + c) as u32;
                    for j in 0..LANES {
                        let q = q0 + j as u32;
                        let w = h[j] - l[j];
                        width_v[j] = width_v[j].wrapping_add(w);
                        carry_v[j] += (width_v[j] < w) as u32;
                        let lb = (q - l[j]).max(h[j] - q);
                        lb_c[j] = lb;
                        min_v[j] = min_v[j].min(lb);
                        max_v[j] = max_v[j].max(lb);
                        leak_v[j] += (l[j] < ds || h[j] > de) as u32;
                        short_v[j] += (h[j] - l[j] != lh[j] - ll[j]) as u32;
                    }
                    let step = cur.2 as u64;
                    let extends = expect != u64::MAX
                        && lb_c.iter().zip(0u64..).fold(true, |all, (&v, j)| all & (v as u64 == expect + j * step));
                    if extends {
                        cur.1 += LANES as u32;
                        expect += LANES as u64 * step;
                    } else {
                        for &lb in &lb_c {
                            track(lbs, &mut cur, &mut expect, lb);
                        }
                    }
                }
                cells += whole as u64
                    + width_v.iter().map(|&v| v as u64).sum::<u64>()
                    + (carry_v.iter().map(|&v| v as u64).sum::<u64>() << 32);
                lmin = min_v.iter().fold(lmin, |m, &v| m.min(v));
                lmax = max_v.iter().fold(lmax, |m, &v| m.max(v));
                leaking += leak_v.iter().map(|&v| v as u64).sum::<u64>();
                short += short_v.iter().map(|&v| v as u64).sum::<u64>();
                for (q, (((&l, &h), &ll), &lh)) in
                    ((start + whole) as u32..).zip(lo.iter().zip(hi).zip(llo).zip(lhi).skip(whole))
                {
                    cells += (h - l) as u64 + 1;
                    let lb = (q - l).max(h - q);
                    lmin = lmin.min(lb);
                    lmax = lmax.max(lb);
                    leaking += (l < ds || h > de) as u64;
                    short += (h - l != lh - ll) as u64;
                    track(lbs, &mut cur, &mut expect, lb);
                }
                lbs.cur = cur;
            }
            if let Some(f) = frozen {
                cells += f.cells;
                leaking += f.leaking;
                lmin = lmin.min(f.lmin);
                lmax = lmax.max(f.lmax);
                for &run in &f.runs {
                    lbs.push_run(run);
                }
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
