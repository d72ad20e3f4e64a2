//! Rows as sorted, disjoint, inclusive `[lo, hi]` intervals in CSR form.

use super::ReachError;
use crate::bits::{BitMatrix, WORD_BITS};

/// An inclusive interval `[lo, hi]` of positions.
pub type Span = [u32; 2];

/// `n` rows, each a sorted list of disjoint inclusive intervals (CSR: `offsets[q]..offsets[q+1]`
/// index `spans`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IntervalRows {
    n: usize,
    offsets: Vec<usize>,
    spans: Vec<Span>,
}

impl IntervalRows {
    /// Checks and wraps CSR rows: `offsets` has `n + 1` non-decreasing entries from 0 to
    /// `spans.len()`, and each row's intervals are sorted, disjoint (`hi < next lo`), with
    /// `lo <= hi < n`.
    pub fn new(n: u64, offsets: Vec<usize>, spans: Vec<Span>) -> Result<IntervalRows, ReachError> {
        if n >= u32::MAX as u64 {
            return Err(ReachError::TooLarge { n });
        }
        let bad = ReachError::BadOffsets { expected: n + 1 };
        if offsets.len() as u64 != n + 1 || offsets.first() != Some(&0) || offsets.last() != Some(&spans.len()) {
            return Err(bad);
        }
        if offsets.windows(2).any(|w| w[0] > w[1]) {
            return Err(bad);
        }
        for q in 0..n as usize {
            let row = &spans[offsets[q]..offsets[q + 1]];
            for (i, s) in row.iter().enumerate() {
                let ok = s[0] <= s[1] && (s[1] as u64) < n && (i == 0 || row[i - 1][1] < s[0]);
                if !ok {
                    return Err(ReachError::BadInterval {
                        row: q as u64,
                        index: i,
                        lo: s[0] as u64,
                        hi: s[1] as u64,
                        n,
                    });
                }
            }
        }
        Ok(IntervalRows { n: n as usize, offsets, spans })
    }

    /// From one list of `[lo, hi]` per row (checked as in [`IntervalRows::new`]).
    pub fn from_lists(n: u64, rows: &[Vec<[u64; 2]>]) -> Result<IntervalRows, ReachError> {
        if rows.len() as u64 != n {
            return Err(ReachError::BadOffsets { expected: n + 1 });
        }
        let mut offsets = vec![0usize];
        let mut spans = Vec::new();
        for (q, row) in rows.iter().enumerate() {
            for (i, s) in row.iter().enumerate() {
                if s[0] > s[1] || s[1] >= n {
                    return Err(ReachError::BadInterval { row: q as u64, index: i, lo: s[0], hi: s[1], n });
                }
                spans.push([s[0] as u32, s[1] as u32]);
            }
            offsets.push(spans.len());
        }
        IntervalRows::new(n, offsets, spans)
    }

    /// Unchecked constructor for the engine (rows already sorted and disjoint).
    pub(crate) fn from_parts(n: usize, offsets: Vec<usize>, spans: Vec<Span>) -> IntervalRows {
        debug_assert_eq!(offsets.len(), n + 1);
        IntervalRows { n, offsets, spans }
    }

    /// The rows of a dense matrix, or `Err((row, intervals))` for the first row with more than
    /// `cap` intervals.
    ///
    /// Complexity: `O(n²/64)` word operations (interval starts are counted per word).
    pub fn from_bitmatrix(m: &BitMatrix, cap: usize) -> Result<IntervalRows, (usize, usize)> {
        let n = m.n();
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0);
        let mut spans = Vec::new();
        for q in 0..n {
            let row = m.row(q);
            // Starts: bits set whose previous bit is clear.
            let mut starts = 0usize;
            let mut carry = 0u64;
            for &w in row {
                starts += (w & !((w << 1) | carry)).count_ones() as usize;
                carry = w >> (WORD_BITS - 1);
            }
            if starts > cap {
                return Err((q, starts));
            }
            let mut k = 0usize;
            let words = row.len();
            while k < n {
                // Next set bit at or after k.
                let mut wi = k / WORD_BITS;
                let mut w = row[wi] & (!0u64 << (k % WORD_BITS));
                while w == 0 {
                    wi += 1;
                    if wi >= words {
                        break;
                    }
                    w = row[wi];
                }
                if wi >= words {
                    break;
                }
                let lo = wi * WORD_BITS + w.trailing_zeros() as usize;
                // Next clear bit after lo.
                let mut wi2 = lo / WORD_BITS;
                let mut c = !row[wi2] & (!0u64 << (lo % WORD_BITS));
                while c == 0 {
                    wi2 += 1;
                    if wi2 >= words {
                        break;
                    }
                    c = !row[wi2];
                }
                let end = if wi2 >= words { n } else { (wi2 * WORD_BITS + c.trailing_zeros() as usize).min(n) };
                spans.push([lo as u32, end as u32 - 1]);
                k = end;
            }
            offsets.push(spans.len());
        }
        Ok(IntervalRows { n, offsets, spans })
    }

    /// Number of rows.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Row `q`'s intervals.
    #[inline]
    pub fn row(&self, q: usize) -> &[Span] {
        &self.spans[self.offsets[q]..self.offsets[q + 1]]
    }

    /// Total number of intervals.
    pub fn span_count(&self) -> usize {
        self.spans.len()
    }

    /// Number of cells `Σ (hi - lo + 1)`.
    pub fn cells(&self) -> u64 {
        self.spans.iter().map(|s| (s[1] - s[0]) as u64 + 1).sum()
    }

    /// Whether `(q, k)` is set.
    pub fn contains(&self, q: usize, k: usize) -> bool {
        let row = self.row(q);
        let i = row.partition_point(|s| (s[1] as usize) < k);
        i < row.len() && row[i][0] as usize <= k
    }

    /// The same rows with the diagonal added.
    pub fn with_diagonal(&self) -> IntervalRows {
        let mut offsets = Vec::with_capacity(self.n + 1);
        offsets.push(0);
        let mut spans = Vec::with_capacity(self.spans.len() + self.n);
        let mut scratch = Vec::new();
        for q in 0..self.n {
            scratch.clear();
            scratch.extend_from_slice(self.row(q));
            scratch.push([q as u32, q as u32]);
            normalise(&mut scratch);
            spans.extend_from_slice(&scratch);
            offsets.push(spans.len());
        }
        IntervalRows { n: self.n, offsets, spans }
    }

    /// The dense matrix of these rows.
    pub fn to_bitmatrix(&self) -> BitMatrix {
        let mut m = BitMatrix::zeros(self.n);
        for q in 0..self.n {
            let row = m.row_mut(q);
            for s in &self.spans[self.offsets[q]..self.offsets[q + 1]] {
                set_range(row, s[0] as usize, s[1] as usize);
            }
        }
        m
    }

    /// Row `q` as `[lo, hi]` pairs of `u64`.
    pub fn row_u64(&self, q: usize) -> Vec<[u64; 2]> {
        self.row(q).iter().map(|s| [s[0] as u64, s[1] as u64]).collect()
    }
}

/// Sets bits `lo..=hi` of a row of words.
pub(crate) fn set_range(row: &mut [u64], lo: usize, hi: usize) {
    let (a, b) = (lo / WORD_BITS, hi / WORD_BITS);
    let first = !0u64 << (lo % WORD_BITS);
    let last = !0u64 >> (WORD_BITS - 1 - hi % WORD_BITS);
    if a == b {
        row[a] |= first & last;
    } else {
        row[a] |= first;
        row[a + 1..b].fill(!0);
        row[b] |= last;
    }
}

/// Sorts intervals by `lo` and merges overlapping or touching ones, in place.
pub(crate) fn normalise(v: &mut Vec<Span>) {
    if v.len() <= 1 {
        return;
    }
    v.sort_unstable_by_key(|s| s[0]);
    let mut w = 0;
    for i in 1..v.len() {
        let s = v[i];
        if s[0] as u64 <= v[w][1] as u64 + 1 {
            if s[1] > v[w][1] {
                v[w][1] = s[1];
            }
        } else {
            w += 1;
            v[w] = s;
        }
    }
    v.truncate(w + 1);
}

/// Merges two sorted disjoint lists into `out` (appending), coalescing touching intervals.
pub(crate) fn merge_into(a: &[Span], b: &[Span], out: &mut Vec<Span>) {
    let start = out.len();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let s = if j >= b.len() || (i < a.len() && a[i][0] <= b[j][0]) {
            i += 1;
            a[i - 1]
        } else {
            j += 1;
            b[j - 1]
        };
        let len = out.len();
        if len > start && s[0] as u64 <= out[len - 1][1] as u64 + 1 {
            if s[1] > out[len - 1][1] {
                out[len - 1][1] = s[1];
            }
        } else {
            out.push(s);
        }
    }
}

/// Reach rows: one interval per row (with a flag for non-decreasing ends), or general.
#[derive(Clone, Debug)]
pub(crate) enum Rows {
    Single { lo: Vec<u32>, hi: Vec<u32>, mono: bool },
    Multi(IntervalRows),
}

pub(super) fn is_mono(lo: &[u32], hi: &[u32]) -> bool {
    lo.windows(2).all(|w| w[0] <= w[1]) && hi.windows(2).all(|w| w[0] <= w[1])
}

impl Rows {
    pub(super) fn identity(n: usize) -> Rows {
        let lo: Vec<u32> = (0..n as u32).collect();
        Rows::Single { hi: lo.clone(), lo, mono: true }
    }

    pub(crate) fn from_intervals(rows: IntervalRows) -> Rows {
        let n = rows.n();
        if rows.span_count() == n && (0..n).all(|q| rows.row(q).len() == 1) {
            let lo: Vec<u32> = (0..n).map(|q| rows.row(q)[0][0]).collect();
            let hi: Vec<u32> = (0..n).map(|q| rows.row(q)[0][1]).collect();
            let mono = is_mono(&lo, &hi);
            Rows::Single { lo, hi, mono }
        } else {
            Rows::Multi(rows)
        }
    }

    pub(crate) fn n(&self) -> usize {
        match self {
            Rows::Single { lo, .. } => lo.len(),
            Rows::Multi(r) => r.n(),
        }
    }

    #[inline]
    pub(crate) fn row_into(&self, q: usize, out: &mut Vec<Span>) {
        match self {
            Rows::Single { lo, hi, .. } => out.push([lo[q], hi[q]]),
            Rows::Multi(r) => out.extend_from_slice(r.row(q)),
        }
    }

    #[inline]
    pub(super) fn min_max(&self, q: usize) -> (u32, u32) {
        match self {
            Rows::Single { lo, hi, .. } => (lo[q], hi[q]),
            Rows::Multi(r) => {
                let row = r.row(q);
                (row[0][0], row[row.len() - 1][1])
            }
        }
    }

    #[inline]
    pub(super) fn row_cells(&self, q: usize) -> u64 {
        match self {
            Rows::Single { lo, hi, .. } => (hi[q] - lo[q]) as u64 + 1,
            Rows::Multi(r) => r.row(q).iter().map(|s| (s[1] - s[0]) as u64 + 1).sum(),
        }
    }

    pub(crate) fn cells(&self) -> u64 {
        match self {
            Rows::Single { lo, hi, .. } => lo.iter().zip(hi).map(|(&l, &h)| (h - l) as u64 + 1).sum(),
            Rows::Multi(r) => r.cells(),
        }
    }

    pub(crate) fn row_u64(&self, q: usize) -> Vec<[u64; 2]> {
        let mut v = Vec::new();
        self.row_into(q, &mut v);
        v.iter().map(|s| [s[0] as u64, s[1] as u64]).collect()
    }

    pub(crate) fn to_interval_rows(&self) -> IntervalRows {
        match self {
            Rows::Multi(r) => r.clone(),
            Rows::Single { lo, hi, .. } => {
                let n = lo.len();
                IntervalRows::from_parts(n, (0..=n).collect(), lo.iter().zip(hi).map(|(&l, &h)| [l, h]).collect())
            }
        }
    }
}
