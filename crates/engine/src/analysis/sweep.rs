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
#[derive(Clone, Debug)]
pub struct FirstReach {
    n: usize,
    layers: Cells,
    depth: usize,
}

/// Equal when every cell's layer is, however the cells are stored.
impl PartialEq for FirstReach {
    fn eq(&self, other: &FirstReach) -> bool {
        self.n == other.n
            && self.depth == other.depth
            && (0..self.n * self.n).all(|i| self.layers.get(i) == other.layers.get(i))
    }
}

impl Eq for FirstReach {}

/// The table whose entry `b` has field `i` (`width` bits wide, 4 or 8) all ones where bit `i` of
/// `b` is set: 8 cells' masks from a byte of reach bits.
const fn spread_table(width: u32) -> [u64; 256] {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            if b >> i & 1 == 1 {
                t[b] |= ((1 << width) - 1) << (width * i);
            }
            i += 1;
        }
        b += 1;
    }
    t
}

/// One thread's part of a frontier BFS writing the first-reach matrix: the layers of its batch go
/// to `buffer`, `n` rows of a batch's cells, so that the matrix is written in row segments of a
/// batch's keys (1024 cells, 512 in wasm), not one word of 64 cells per row and layer (each a
/// different page at `n ≥ 4096`); when the batch is done, the buffer is ORed into the matrix (under
/// its lock: the threads' batches are disjoint columns, a lock held once a batch) and left zero.
/// Layers past 254 go to the matrix directly.
struct Stripe<'a> {
    n: usize,
    buffer: Cells,
    matrix: &'a std::sync::Mutex<Cells>,
}

impl Stripe<'_> {
    const BATCH: usize = super::frontier::BATCH_WORDS * WORD_BITS;
}

/// The matrix, locked (a thread that panicked holding it panics the search: its value is moot).
fn lock(matrix: &std::sync::Mutex<Cells>) -> std::sync::MutexGuard<'_, Cells> {
    matrix.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl super::frontier::Found for Stripe<'_> {
    fn new_keys(&mut self, layer: usize, q: usize, word0: usize, bits: &[u64]) {
        for (w, &new) in bits.iter().enumerate().filter(|(_, new)| **new != 0) {
            if layer < u8::MAX as usize {
                self.buffer.set_word(q * Self::BATCH + w * WORD_BITS, new, layer);
            } else {
                lock(self.matrix).set_bits(q * self.n + (word0 + w) * WORD_BITS, new, layer);
            }
        }
    }

    fn batch_done(&mut self, first_word: usize) {
        let n = self.n;
        let start = first_word * WORD_BITS;
        let width = Self::BATCH.min(n - start);
        let mut matrix = lock(self.matrix);
        for q in 0..n {
            self.buffer.drain_into(q * Self::BATCH, width, &mut matrix, q * n + start);
        }
    }
}

/// `SPREAD[b]` has byte `i` all ones where bit `i` of `b` is set.
const SPREAD: [u64; 256] = spread_table(8);

/// `SPREAD4[b]` has half-byte `i` all ones where bit `i` of `b` is set (the low 32 bits).
const SPREAD4: [u64; 256] = spread_table(4);

/// `D + 1` per cell, row-major; 0 = unreachable (so the matrix starts as zeroed memory). One byte
/// per cell while every layer is below 255 (`L*` is small for most masks), two once one is not;
/// the frontier BFS's matrix starts at half a byte per cell (`Nibble`, cell `i` in the low half
/// of byte `i / 2` when `i` is even), and widens to a byte once a layer reaches 15.
#[derive(Clone, Debug)]
enum Cells {
    /// Half a byte per cell, and the number of cells.
    Nibble(Vec<u8>, usize),
    Narrow(Vec<u8>),
    Wide(Vec<u16>),
}

/// Largest value (`D + 1`) a [`Cells::Nibble`] cell holds.
const NIBBLE_MAX: usize = 15;

impl Cells {
    fn zeros(len: usize) -> Cells {
        Cells::Narrow(vec![0; len])
    }

    /// Zeroed cells at half a byte each.
    fn nibbles(len: usize) -> Cells {
        Cells::Nibble(vec![0; len.div_ceil(2)], len)
    }

    /// Widens the cells (half bytes to bytes, bytes to two) until they can hold the value `v`
    /// (a layer + 1); the values are unchanged.
    #[inline]
    fn hold(&mut self, v: usize) {
        if let Cells::Nibble(c, len) = self
            && v > NIBBLE_MAX
        {
            let mut wide = Vec::with_capacity(*len);
            for &b in c.iter() {
                wide.push(b & 15);
                wide.push(b >> 4);
            }
            wide.truncate(*len);
            *self = Cells::Narrow(wide);
        }
        if let Cells::Narrow(c) = self
            && v > u8::MAX as usize
        {
            *self = Cells::Wide(c.iter().map(|&x| x as u16).collect());
        }
    }

    /// Cells `range` first reached at `layer`.
    #[inline]
    fn fill(&mut self, range: std::ops::Range<usize>, layer: usize) {
        let v = layer + 1;
        self.hold(v);
        match self {
            Cells::Nibble(c, _) => {
                let (mut a, b) = (range.start, range.end);
                if a % 2 == 1 && a < b {
                    c[a / 2] = (c[a / 2] & 0x0F) | (v as u8) << 4;
                    a += 1;
                }
                let pairs = (b - a) / 2;
                c[a / 2..a / 2 + pairs].fill(v as u8 * 0x11);
                if a + 2 * pairs < b {
                    let i = (a + 2 * pairs) / 2;
                    c[i] = (c[i] & 0xF0) | v as u8;
                }
            }
            Cells::Narrow(c) => c[range].fill(v as u8),
            Cells::Wide(c) => c[range].fill(v as u16),
        }
    }

    /// Cells `base + i` for the set bits `i` of `bits`, first reached at `layer`.
    #[inline]
    fn set_bits(&mut self, base: usize, bits: u64, layer: usize) {
        let v = layer + 1;
        self.hold(v);
        let mut bits = bits;
        match self {
            Cells::Nibble(c, _) => {
                while bits != 0 {
                    let i = base + bits.trailing_zeros() as usize;
                    let shift = 4 * (i % 2);
                    c[i / 2] = (c[i / 2] & !(0x0F << shift)) | (v as u8) << shift;
                    bits &= bits - 1;
                }
            }
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
            Cells::Nibble(c, len) if v <= NIBBLE_MAX && base.is_multiple_of(2) && base + WORD_BITS <= *len => {
                let fill = (v as u32) * 0x1111_1111;
                let row: &mut [u8; WORD_BITS / 2] =
                    (&mut c[base / 2..(base + WORD_BITS) / 2]).try_into().expect("64 cells");
                for (i, chunk) in row.chunks_exact_mut(4).enumerate() {
                    let chunk: &mut [u8; 4] = chunk.try_into().expect("8 cells");
                    let spread = SPREAD4[(bits >> (8 * i)) as u8 as usize] as u32;
                    *chunk = (u32::from_le_bytes(*chunk) | (spread & fill)).to_le_bytes();
                }
            }
            _ => self.set_bits(base, bits, layer),
        }
    }

    /// ORs cells `from..from + len` into `dst` from cell `at` and zeroes them here (the frontier
    /// BFS's batch buffer into the matrix): half bytes into half bytes byte by byte when both
    /// start on a byte, else through [`Cells::or_slice`].
    fn drain_into(&mut self, from: usize, len: usize, dst: &mut Cells, at: usize) {
        match (&mut *self, &mut *dst) {
            (Cells::Nibble(src, _), Cells::Nibble(d, _)) if from.is_multiple_of(2) && at.is_multiple_of(2) => {
                let bytes = len / 2;
                let (s, t) = (&mut src[from / 2..from / 2 + bytes], &mut d[at / 2..at / 2 + bytes]);
                t.iter_mut().zip(&*s).for_each(|(t, s)| *t |= s);
                s.fill(0);
                if len % 2 == 1 {
                    let last = std::mem::take(&mut src[(from + len) / 2]);
                    d[(at + len) / 2] |= last & 0x0F;
                }
            }
            (Cells::Narrow(src), _) => dst.or_slice(at, &mut src[from..from + len]),
            _ => {
                let mut values: Vec<u8> = (from..from + len).map(|i| self.get(i) as u8).collect();
                dst.or_slice(at, &mut values);
                if let Cells::Nibble(src, _) = self {
                    for i in from..from + len {
                        src[i / 2] &= !(0x0F << (4 * (i % 2)));
                    }
                }
            }
        }
    }

    /// ORs `values` (layers + 1, 0 = none) into the cells from `start`, and zeroes `values`.
    fn or_slice(&mut self, start: usize, values: &mut [u8]) {
        if matches!(self, Cells::Nibble(..)) {
            self.hold(values.iter().fold(0, |a, &v| a | v) as usize);
        }
        match self {
            Cells::Nibble(c, _) => {
                let (mut at, mut v) = (start, &values[..]);
                if at % 2 == 1 && !v.is_empty() {
                    c[at / 2] |= v[0] << 4;
                    (at, v) = (at + 1, &v[1..]);
                }
                let n = v.len() / 2;
                let dst = &mut c[at / 2..at / 2 + n];
                // 16 cells (each at most 15) into 8 bytes at a time, in 64-bit words: each even
                // byte takes its odd neighbour as its high half, then the even bytes close up.
                let pack = |x: u64| -> u64 {
                    let y = (x | x >> 4) & 0x00FF_00FF_00FF_00FF;
                    let y = (y | y >> 8) & 0x0000_FFFF_0000_FFFF;
                    (y | y >> 16) & 0xFFFF_FFFF
                };
                let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 cells"));
                let whole = n / 8 * 8;
                for (d, src) in dst[..whole].chunks_exact_mut(8).zip(v.chunks_exact(16)) {
                    let packed = pack(word(&src[..8])) | pack(word(&src[8..])) << 32;
                    d.copy_from_slice(&(word(d) | packed).to_le_bytes());
                }
                for (b, p) in dst[whole..].iter_mut().zip(v[2 * whole..].chunks_exact(2)) {
                    *b |= p[0] | p[1] << 4;
                }
                if v.len() % 2 == 1 {
                    c[at / 2 + n] |= v[v.len() - 1];
                }
            }
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
            Cells::Nibble(c, _) => (c[i / 2] >> (4 * (i % 2)) & 15) as usize,
            Cells::Narrow(c) => c[i] as usize,
            Cells::Wide(c) => c[i] as usize,
        }
    }

    /// How many cells hold each value `0..values`.
    fn histogram(&self, values: usize) -> Vec<usize> {
        let mut h = vec![0usize; values];
        match self {
            Cells::Nibble(c, len) => {
                c.iter().for_each(|&b| {
                    h[(b & 15) as usize] += 1;
                    h[(b >> 4) as usize] += 1;
                });
                // The unused half of the last byte of an odd count.
                h[0] -= c.len() * 2 - *len;
            }
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
    /// otherwise, or once the reach rows fragment into many intervals, by a frontier BFS of 1024
    /// keys at a time (512 in wasm) when the mask has at most 32 keys per row on average (first,
    /// without the structured attempt, when those keys are scattered: random masks), else by the
    /// semi-naive bit sweep ([`FirstReach::by_sweep`]).
    ///
    /// Natively the BFS's batches are shared among the machine's cores.
    ///
    /// Memory: `n²` bytes (`2n²` when `L* ≥ 255`; `n²/2` on the BFS's first path while
    /// `L* < 15`), plus the engine's rows, three bit matrices (the sweep) or, for each thread of
    /// the BFS, `n` rows of a byte per key of a batch (half a byte on its first path) and `3n`
    /// blocks of its keys' bits (1024 keys and 128-byte blocks natively).
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
        let sparse = crate::sparse::Graph::sparse(&adj);
        if let Some(graph) = sparse.as_ref().filter(|g| g.scattered) {
            // Random-like masks reach far in few layers: half a byte a cell until one is 15.
            return Self::frontier_into(graph, Self::diagonal_in(Cells::nibbles(n * n), n));
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
            None => match sparse {
                Some(graph) => Self::frontier_into(&graph, layers),
                None => Self::sweep_into(&adj, layers),
            },
        }
    }

    /// The first-reach matrix by the frontier BFS alone (a batch of keys at a time); what
    /// [`FirstReach::new`] runs on sparse masks.
    #[cfg(test)]
    pub(crate) fn by_frontier(mask: &BitMatrix) -> FirstReach {
        Self::frontier_into(&crate::sparse::Graph::of(&mask.with_diagonal()), Self::diagonal(mask.n()))
    }

    /// The frontier BFS in one `direction` on at most `threads` threads, stopping rows at `limit`
    /// when given; with the cells each layer added.
    #[cfg(test)]
    pub(super) fn by_frontier_with(
        adj: &BitMatrix,
        limit: Option<&super::frontier::Limit>,
        direction: super::frontier::Direction,
        kernel: super::frontier::Kernel,
        threads: usize,
    ) -> (FirstReach, Vec<usize>) {
        Self::frontier_with(&crate::sparse::Graph::of(adj), Self::diagonal(adj.n()), limit, direction, kernel, threads)
    }

    /// What [`FirstReach::new`] runs on a scattered sparse mask (half a byte a cell), on at most
    /// `threads` threads.
    #[cfg(test)]
    pub(super) fn by_frontier_in_half_bytes(mask: &BitMatrix, threads: usize) -> FirstReach {
        use super::frontier::{Direction, Kernel};
        let (n, graph) = (mask.n(), crate::sparse::Graph::of(&mask.with_diagonal()));
        let layers = Self::diagonal_in(Cells::nibbles(n * n), n);
        Self::frontier_with(&graph, layers, None, Direction::Cheaper, Kernel::Widest, threads).0
    }

    fn frontier_into(graph: &crate::sparse::Graph, layers: Cells) -> FirstReach {
        use super::frontier::{Direction, Kernel, cores};
        Self::frontier_with(graph, layers, None, Direction::Cheaper, Kernel::Widest, cores()).0
    }

    /// The frontier BFS writing its cells a batch at a time, its batches shared among the
    /// machine's cores (natively): each thread writes a batch's layers to a buffer of its own
    /// ([`Stripe`]), ORed into the matrix when the batch is done.
    fn frontier_with(
        graph: &crate::sparse::Graph,
        layers: Cells,
        limit: Option<&super::frontier::Limit>,
        direction: super::frontier::Direction,
        kernel: super::frontier::Kernel,
        threads: usize,
    ) -> (FirstReach, Vec<usize>) {
        let n = graph.n();
        // Each buffer stores its cells as the matrix starts (half bytes or bytes).
        let nibbles = matches!(layers, Cells::Nibble(..));
        let matrix = std::sync::Mutex::new(layers);
        let (depth, added) = super::frontier::frontier_batches::<{ super::frontier::BATCH_WORDS }, _>(
            graph,
            limit,
            direction,
            kernel,
            threads,
            &|| Stripe {
                n,
                buffer: if nibbles { Cells::nibbles(n * Stripe::BATCH) } else { Cells::zeros(n * Stripe::BATCH) },
                matrix: &matrix,
            },
        );
        let layers = matrix.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        (FirstReach { n, layers, depth }, added)
    }

    /// The first-reach matrix by the semi-naive layer sweep alone: `O(L* · ones(M) + Σ spans +
    /// |R|)` word operations. The reference [`FirstReach::new`] is tested against.
    pub fn by_sweep(mask: &BitMatrix) -> FirstReach {
        Self::sweep_into(&mask.with_diagonal(), Self::diagonal(mask.n()))
    }

    /// The matrix with only the diagonal reached (at layer 0).
    fn diagonal(n: usize) -> Cells {
        Self::diagonal_in(Cells::zeros(n * n), n)
    }

    /// `layers` (zeroed, `n x n`) with the diagonal reached at layer 0.
    fn diagonal_in(mut layers: Cells, n: usize) -> Cells {
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

    /// Whether the cells are stored at half a byte each (tests).
    #[cfg(test)]
    pub(super) fn in_half_bytes(&self) -> bool {
        matches!(self.layers, Cells::Nibble(..))
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
