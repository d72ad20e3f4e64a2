//! The semi-naive layer sweep, first-reach layers and the `R(L)` reference.

use super::*;
use crate::bits::{Ones, WORD_BITS, or_into, words_for};

/// Semi-naive layer sweep from `R(0) = I`: `R(L+1)[q] = R(L)[q] ∪ ⋃_{j ∈ Ā[q]} Δ(L)[j]` with
/// `Δ(L) = R(L) \ R(L-1)`. Calls `on_new(layer, q, word_index, reach_word_before, new_bits)` for
/// every non-zero word of new cells and returns the last layer that added a cell (`L*`).
///
/// `targets[q]`, when given, is `|R[q]|` of the limit: a row that reached it leaves the sweep.
pub(crate) fn layer_sweep(
    adj: &BitMatrix,
    targets: Option<&[usize]>,
    mut on_new: impl FnMut(usize, usize, usize, u64, u64),
) -> usize {
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
    while !active.is_empty() {
        layer += 1;
        let mut grew = false;
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
                        count[q] += fresh.count_ones() as usize;
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
        } else {
            break;
        }
        active.retain(|&q| targets.is_none_or(|t| count[q] < t[q]));
    }
    last_growth
}

/// First-reach layers `D[q][k]`: the shortest path length from `k` to `q` in `Ā`
/// (0 on the diagonal, `None` when unreachable). `R(L)[q][k] = D[q][k] ≤ L`, so one matrix answers
/// every position of a layer slider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FirstReach {
    n: usize,
    layers: Vec<u16>,
    depth: usize,
}

/// Marker for unreachable cells in [`FirstReach`] storage.
pub(super) const NEVER: u16 = u16::MAX;

impl FirstReach {
    /// Computes the first-reach matrix of `mask` by the semi-naive layer sweep.
    ///
    /// Complexity: `O(L* · ones(M) + Σ spans + |R|)`; memory `2n²` bytes plus three bit matrices.
    ///
    /// # Examples
    /// ```
    /// use hasseflow_engine::{BitMatrix, FirstReach};
    /// let window = BitMatrix::from_fn(4, |q, k| q >= k && q - k < 2);
    /// let d = FirstReach::new(&window);
    /// assert_eq!(d.get(3, 0), Some(3));
    /// assert_eq!(d.get(0, 3), None);
    /// assert_eq!(d.depth(), 3);
    /// ```
    pub fn new(mask: &BitMatrix) -> FirstReach {
        let n = mask.n();
        let adj = mask.with_diagonal();
        let mut layers = vec![NEVER; n * n];
        for q in 0..n {
            layers[q * n + q] = 0;
        }
        let depth = layer_sweep(&adj, None, |layer, q, w, _, new| {
            for bit in Ones::new(&[new]) {
                layers[q * n + w * WORD_BITS + bit] = layer as u16;
            }
        });
        FirstReach { n, layers, depth }
    }

    /// Side length.
    pub fn n(&self) -> usize {
        self.n
    }

    /// `D[q][k]`, or `None` when `q` never sees `k`.
    pub fn get(&self, q: usize, k: usize) -> Option<usize> {
        match self.layers[q * self.n + k] {
            NEVER => None,
            d => Some(d as usize),
        }
    }

    /// `L* = max finite D`.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// `|R(L)|` for `L = 0..=L*`, counted from the matrix (the same curve as
    /// [`Analysis::growth`]).
    pub fn growth(&self) -> Vec<usize> {
        let mut per_layer = vec![0usize; self.depth + 1];
        for &d in self.layers.iter().filter(|&&d| d != NEVER) {
            per_layer[d as usize] += 1;
        }
        per_layer
            .iter()
            .scan(0, |acc, &c| {
                *acc += c;
                Some(*acc)
            })
            .collect()
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
