//! The semi-naive layer sweep, first-reach layers and the `R(L)` reference.

use super::*;
use crate::bits::{Ones, WORD_BITS, or_into, words_for};

/// Semi-naive layer sweep from `R(0) = I`: `R(L+1)[q] = R(L)[q] ∪ ⋃_{j ∈ Ā[q]} Δ(L)[j]` with
/// `Δ(L) = R(L) \ R(L-1)`. Calls `on_new(layer, q, word_index, reach_word_before, new_bits)` for
/// every non-zero word of new cells and returns the last layer that added a cell (`L*`) and the
/// number of cells each layer added (`growth[0] = n`, then one entry per layer to `L*`).
///
/// `targets[q]`, when given, is `|R[q]|` of the limit: a row that reached it leaves the sweep, as
/// does a row that gained no cell in a layer.
pub(crate) fn layer_sweep(
    adj: &BitMatrix,
    targets: Option<&[usize]>,
    mut on_new: impl FnMut(usize, usize, usize, u64, u64),
) -> (usize, Vec<usize>) {
    let n = adj.n();
    let words = words_for(n);
    let mut reach = BitMatrix::identity(n);
    let mut delta = BitMatrix::identity(n);
    let mut next = BitMatrix::zeros(n);
    // Word span [lo, hi) of each row's delta; empty when lo >= hi.
    let mut span: Vec<(usize, usize)> = (0..n).map(|q| (q / WORD_BITS, q / WORD_BITS + 1)).collect();
    let mut next_span = vec![(0usize, 0usize); n];
    let mut count = vec![1usize; n];
    let mut active: Vec<usize> = (0..n).filter(|&q| targets.is_none_or(|t| t[q] > 1)).collect();
    let mut scratch = vec![0u64; words];
    // Non-zero word range of each adjacency row: a window row is scanned in 2 words, not n/64.
    let adj_span: Vec<(usize, usize)> = (0..n)
        .map(|q| {
            let row = adj.row(q);
            let lo = row.iter().position(|&w| w != 0).unwrap_or(0);
            let hi = row.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1);
            (lo, hi.max(lo))
        })
        .collect();
    let mut layer = 0;
    let mut last_growth = 0;
    let mut added = vec![n];
    while !active.is_empty() {
        layer += 1;
        let mut grew = false;
        let mut layer_added = 0;
        for &q in &active {
            let (mut lo, mut hi) = (usize::MAX, 0usize);
            let (alo, ahi) = adj_span[q];
            for j in Ones::new(&adj.row(q)[alo..ahi]).map(|j| j + alo * WORD_BITS) {
                let (a, b) = span[j];
                if a < b {
                    or_into(&mut scratch[a..b], &delta.row(j)[a..b]);
                    lo = lo.min(a);
                    hi = hi.max(b);
                }
            }
            let (mut nlo, mut nhi) = (usize::MAX, 0usize);
            if lo < hi {
                let rrow = reach.row_mut(q);
                let nrow = next.row_mut(q);
                for w in lo..hi {
                    let fresh = scratch[w] & !rrow[w];
                    scratch[w] = 0;
                    if fresh != 0 {
                        on_new(layer, q, w, rrow[w], fresh);
                        rrow[w] |= fresh;
                        nrow[w] = fresh;
                        let c = fresh.count_ones() as usize;
                        count[q] += c;
                        layer_added += c;
                        nlo = nlo.min(w);
                        nhi = w + 1;
                    }
                }
            }
            if nlo < nhi {
                grew = true;
                next_span[q] = (nlo, nhi);
            }
        }
        // Clear the old delta rows over their spans, then swap.
        for (q, s) in span.iter_mut().enumerate() {
            if s.0 < s.1 {
                delta.row_mut(q)[s.0..s.1].fill(0);
            }
            *s = (0, 0);
        }
        std::mem::swap(&mut delta, &mut next);
        std::mem::swap(&mut span, &mut next_span);
        if grew {
            last_growth = layer;
            added.push(layer_added);
        } else {
            break;
        }
        // A row that gained nothing this layer gains nothing later: if (q, k) is first reached
        // at L + 1, a shortest path k → v → … → q makes (q, v) first reached at L. So it leaves,
        // like a row at its target.
        active.retain(|&q| span[q].0 < span[q].1 && targets.is_none_or(|t| count[q] < t[q]));
    }
    (last_growth, added)
}

/// First-reach layers `D[q][k]`: the shortest path length from `k` to `q` in `Ā`
/// (0 on the diagonal, `None` when unreachable). `R(L)[q][k] = D[q][k] ≤ L`, so one matrix answers
/// every position of a layer slider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FirstReach {
    n: usize,
    layers: Cells,
    depth: usize,
}

/// `SPREAD[b]` has byte `i` all ones where bit `i` of `b` is set.
const SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            if b >> i & 1 == 1 {
                t[b] |= 0xFF << (8 * i);
            }
            i += 1;
        }
        b += 1;
    }
    t
};

/// `D + 1` per cell, row-major; 0 = unreachable (so the matrix starts as zeroed memory). One byte
/// per cell while every layer is below 255 (`L*` is small for most masks), two once one is not.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Cells {
    Narrow(Vec<u8>),
    Wide(Vec<u16>),
}

impl Cells {
    fn zeros(len: usize) -> Cells {
        Cells::Narrow(vec![0; len])
    }

    /// Cells `range` first reached at `layer`.
    #[inline]
    fn fill(&mut self, range: std::ops::Range<usize>, layer: usize) {
        let v = layer + 1;
        if let Cells::Narrow(c) = self {
            if v <= u8::MAX as usize {
                c[range].fill(v as u8);
                return;
            }
            *self = Cells::Wide(c.iter().map(|&x| x as u16).collect());
        }
        if let Cells::Wide(c) = self {
            c[range].fill(v as u16);
        }
    }

    /// Cells `base + i` for the set bits `i` of `bits`, first reached at `layer`.
    #[inline]
    fn set_bits(&mut self, base: usize, bits: u64, layer: usize) {
        let v = layer + 1;
        if matches!(self, Cells::Narrow(_)) && v > u8::MAX as usize {
            self.fill(0..0, layer);
        }
        let mut bits = bits;
        match self {
            Cells::Narrow(c) => {
                let row = &mut c[base..];
                while bits != 0 {
                    row[bits.trailing_zeros() as usize] = v as u8;
                    bits &= bits - 1;
                }
            }
            Cells::Wide(c) => {
                let row = &mut c[base..];
                while bits != 0 {
                    row[bits.trailing_zeros() as usize] = v as u16;
                    bits &= bits - 1;
                }
            }
        }
    }

    /// Like [`Cells::set_bits`], 8 cells per step: each byte of `bits` spreads to a mask of 8
    /// cells, OR-ed in with the layer (a cell is written once, or again with the same layer).
    #[inline]
    fn set_word(&mut self, base: usize, bits: u64, layer: usize) {
        let v = layer + 1;
        match self {
            Cells::Narrow(c) if v <= u8::MAX as usize && base + WORD_BITS <= c.len() => {
                let fill = (v as u64) * 0x0101_0101_0101_0101;
                let row: &mut [u8; WORD_BITS] = (&mut c[base..base + WORD_BITS]).try_into().expect("64 cells");
                // Branch-free: in the middle layers most bytes of a word have new cells.
                for (i, chunk) in row.chunks_exact_mut(8).enumerate() {
                    let chunk: &mut [u8; 8] = chunk.try_into().expect("8 cells");
                    let spread = SPREAD[(bits >> (8 * i)) as u8 as usize];
                    *chunk = (u64::from_le_bytes(*chunk) | (spread & fill)).to_le_bytes();
                }
            }
            _ => self.set_bits(base, bits, layer),
        }
    }

    /// ORs `values` (layers + 1, 0 = none) into the cells from `start`, and zeroes `values`.
    fn or_slice(&mut self, start: usize, values: &mut [u8]) {
        match self {
            Cells::Narrow(c) => c[start..start + values.len()].iter_mut().zip(&*values).for_each(|(c, v)| *c |= v),
            Cells::Wide(c) => {
                c[start..start + values.len()].iter_mut().zip(&*values).for_each(|(c, &v)| *c |= v as u16)
            }
        }
        values.fill(0);
    }

    #[inline]
    fn get(&self, i: usize) -> usize {
        match self {
            Cells::Narrow(c) => c[i] as usize,
            Cells::Wide(c) => c[i] as usize,
        }
    }

    /// How many cells hold each value `0..values`.
    fn histogram(&self, values: usize) -> Vec<usize> {
        let mut h = vec![0usize; values];
        match self {
            Cells::Narrow(c) => c.iter().for_each(|&d| h[d as usize] += 1),
            Cells::Wide(c) => c.iter().for_each(|&d| h[d as usize] += 1),
        }
        h
    }
}

impl FirstReach {
    /// Computes the first-reach matrix of `mask`: when its rows (with the diagonal) are at most
    /// [`crate::reach::DEFAULT_MAX_ROW_INTERVALS`] intervals, by the structured reach engine,
    /// layer by layer, filling each row's newly reached intervals (`O(L* · n · intervals + |R|)`);
    /// otherwise, or once the reach rows fragment into many intervals, by a frontier BFS of 512
    /// keys at a time when the mask has at most 32 keys per row on average (first, without the
    /// structured attempt, when those keys are scattered: random masks), else by the semi-naive
    /// bit sweep ([`FirstReach::by_sweep`]).
    ///
    /// Memory: `n²` bytes (`2n²` when `L* ≥ 255`), plus the engine's rows, three bit matrices
    /// (the sweep) or `n` rows of 512 bytes and `4n` blocks of 64 bytes (the BFS).
    ///
    /// # Examples
    /// ```
    /// use hasseflow_engine::{BitMatrix, FirstReach};
    /// let window = BitMatrix::from_fn(4, |q, k| q >= k && q - k < 2);
    /// let d = FirstReach::new(&window);
    /// assert_eq!(d.get(3, 0), Some(3));
    /// assert_eq!(d.get(0, 3), None);
    /// assert_eq!(d.depth(), 3);
    /// assert_eq!(d, FirstReach::by_sweep(&window));
    /// ```
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn new(mask: &BitMatrix) -> FirstReach {
        let n = mask.n();
        let adj = mask.with_diagonal();
        if super::frontier::is_sparse(&adj) && super::frontier::is_scattered(&adj) {
            return Self::frontier_into(&adj, Self::diagonal(n));
        }
        let mut layers = Self::diagonal(n);
        let structured = crate::reach::repeated_first_reach(
            &adj,
            crate::reach::DEFAULT_MAX_ROW_INTERVALS,
            crate::reach::STRUCTURED_SPANS_PER_ROW * n,
            |layer, q, lo, hi| layers.fill(q * n + lo as usize..q * n + hi as usize + 1, layer),
        );
        match structured {
            Some(depth) => FirstReach { n, layers, depth },
            // The cells filled so far hold their exact layers; the sweep or BFS writes them again
            // (with the same values).
            None if super::frontier::is_sparse(&adj) => Self::frontier_into(&adj, layers),
            None => Self::sweep_into(&adj, layers),
        }
    }

    /// The first-reach matrix by the frontier BFS alone (512 keys at a time); what
    /// [`FirstReach::new`] runs on sparse masks.
    #[cfg(test)]
    pub(crate) fn by_frontier(mask: &BitMatrix) -> FirstReach {
        Self::frontier_into(&mask.with_diagonal(), Self::diagonal(mask.n()))
    }

    /// The frontier BFS in one `direction`, stopping rows at `limit` when given; with the cells
    /// each layer added.
    #[cfg(test)]
    pub(super) fn by_frontier_with(
        adj: &BitMatrix,
        limit: Option<&BitMatrix>,
        direction: super::frontier::Direction,
    ) -> (FirstReach, Vec<usize>) {
        Self::frontier_with(adj, Self::diagonal(adj.n()), limit, direction)
    }

    fn frontier_into(adj: &BitMatrix, layers: Cells) -> FirstReach {
        Self::frontier_with(adj, layers, None, super::frontier::Direction::Cheaper).0
    }

    /// The frontier BFS writing its cells a batch at a time: each batch's layers go to a buffer of
    /// `n` rows of 512 cells, copied into the matrix when the batch is done, so that the matrix
    /// is written in row segments of 512 cells, not one word of 64 cells per row and layer (each
    /// a different page at `n ≥ 4096`). Layers past 254 go to the matrix directly.
    fn frontier_with(
        adj: &BitMatrix,
        layers: Cells,
        limit: Option<&BitMatrix>,
        direction: super::frontier::Direction,
    ) -> (FirstReach, Vec<usize>) {
        const BATCH: usize = super::frontier::BATCH_WORDS * WORD_BITS;
        let n = adj.n();
        let cells = std::cell::RefCell::new((layers, Cells::zeros(n * BATCH)));
        let (depth, added) = super::frontier::frontier_layers_by(
            adj,
            limit,
            direction,
            |layer, q, word, new| {
                let (layers, buffer) = &mut *cells.borrow_mut();
                if layer < u8::MAX as usize {
                    buffer.set_word(q * BATCH + word % super::frontier::BATCH_WORDS * WORD_BITS, new, layer);
                } else {
                    layers.set_bits(q * n + word * WORD_BITS, new, layer);
                }
            },
            |first_word| {
                let (layers, buffer) = &mut *cells.borrow_mut();
                let Cells::Narrow(buffer) = buffer else { unreachable!("the buffer holds layers below 255") };
                let start = first_word * WORD_BITS;
                let width = BATCH.min(n - start);
                for q in 0..n {
                    layers.or_slice(q * n + start, &mut buffer[q * BATCH..q * BATCH + width]);
                }
            },
        );
        (FirstReach { n, layers: cells.into_inner().0, depth }, added)
    }

    /// The first-reach matrix by the semi-naive layer sweep alone: `O(L* · ones(M) + Σ spans +
    /// |R|)` word operations. The reference [`FirstReach::new`] is tested against.
    pub fn by_sweep(mask: &BitMatrix) -> FirstReach {
        Self::sweep_into(&mask.with_diagonal(), Self::diagonal(mask.n()))
    }

    /// The matrix with only the diagonal reached (at layer 0).
    fn diagonal(n: usize) -> Cells {
        let mut layers = Cells::zeros(n * n);
        for q in 0..n {
            layers.fill(q * n + q..q * n + q + 1, 0);
        }
        layers
    }

    fn sweep_into(adj: &BitMatrix, mut layers: Cells) -> FirstReach {
        let n = adj.n();
        let (depth, _) =
            layer_sweep(adj, None, |layer, q, w, _, new| layers.set_bits(q * n + w * WORD_BITS, new, layer));
        FirstReach { n, layers, depth }
    }

    /// Side length.
    pub fn n(&self) -> usize {
        self.n
    }

    /// `D[q][k]`, or `None` when `q` never sees `k`.
    pub fn get(&self, q: usize, k: usize) -> Option<usize> {
        self.layers.get(q * self.n + k).checked_sub(1)
    }

    /// `L* = max finite D`.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// `|R(L)|` for `L = 0..=L*`, counted from the matrix (the same curve as
    /// [`Analysis::growth`]).
    pub fn growth(&self) -> Vec<usize> {
        running_sums(&self.layers.histogram(self.depth + 2)[1..])
    }

    /// `R(L)` as a bit matrix.
    pub fn reach_at(&self, layer: usize) -> BitMatrix {
        BitMatrix::from_fn(self.n, |q, k| self.get(q, k).is_some_and(|d| d <= layer))
    }

    /// Row `q` of `D` (`None` = unreachable).
    pub fn row(&self, q: usize) -> impl Iterator<Item = Option<usize>> + '_ {
        (0..self.n).map(move |k| self.get(q, k))
    }
}

/// `|R(L)|` from the cells each layer adds: the running sums of `added`.
pub(super) fn running_sums(added: &[usize]) -> Vec<usize> {
    added
        .iter()
        .scan(0, |acc, &c| {
            *acc += c;
            Some(*acc)
        })
        .collect()
}

/// `R(L)` for one layer count, by `L` boolean products (`Ā^L`). A reference, not a fast path:
/// use [`FirstReach`] for sliders.
pub fn reach_after(mask: &BitMatrix, layers: usize) -> BitMatrix {
    let adj = mask.with_diagonal();
    let mut r = BitMatrix::identity(mask.n());
    for _ in 0..layers {
        r = adj.bool_product(&r);
    }
    r
}
