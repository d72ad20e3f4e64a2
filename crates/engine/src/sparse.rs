//! The reads graph of a sparse mask as adjacency lists, built in one pass over its bit rows: what
//! the order's components (natively, `order::tarjan_reads`) and the layers' frontier BFS
//! (`analysis::frontier`) walk instead of the `n x n` rows.

use crate::bits::{BitMatrix, WORD_BITS};

/// Keys per row (diagonal excluded), on average, up to which the frontier BFS is used.
pub(crate) const SPARSE_KEYS_PER_ROW: usize = 32;

/// Compressed rows, diagonal dropped: row `v`'s positions are `list[start[v]..start[v + 1]]`.
#[derive(Clone, Debug)]
pub(crate) struct Csr {
    start: Vec<u32>,
    pub(crate) list: Vec<u32>,
}

impl Csr {
    #[inline]
    pub(crate) fn of(&self, v: usize) -> &[u32] {
        &self.list[self.start[v] as usize..self.start[v + 1] as usize]
    }
}

/// The reads graph in both directions, diagonal dropped: `reads[q]` are the keys `q` reads,
/// `readers[k]` the positions that read `k`; built in one pass over the rows of the mask.
/// Natively the readers' lists are built on first use (only a frontier that pushes walks them:
/// 0.1 ms at n = 4096 that a random mask's search, which always pulls, did not need); in wasm
/// with the graph (lazily, they would cost the first download 0.6 KB).
#[derive(Clone, Debug)]
pub(crate) struct Graph {
    pub(crate) n: usize,
    pub(crate) reads: Csr,
    /// Where each key's readers start in `readers`' list (its `start`): their counts.
    readers_start: Vec<u32>,
    #[cfg(not(target_arch = "wasm32"))]
    readers: std::sync::OnceLock<Csr>,
    #[cfg(target_arch = "wasm32")]
    readers: Csr,
    /// Whether the rows are scattered (more than 4 intervals per row on average, diagonal
    /// included): the structured engine would fragment at once, so it is not tried first.
    pub(crate) scattered: bool,
}

impl Graph {
    /// The graph of a sparse `adj` (with its diagonal): at most [`SPARSE_KEYS_PER_ROW`] keys per
    /// row on average, else `None`, found once the rows read so far hold more (a dense mask pays
    /// for a few rows, not the matrix). One pass gives the sparsity, the scattering and both
    /// directions, where three scans of the matrix and a fourth to build the graph ran before.
    pub(crate) fn sparse(adj: &BitMatrix) -> Option<Graph> {
        Self::bounded(adj, (SPARSE_KEYS_PER_ROW + 1) * adj.n())
    }

    /// The graph of any `adj` (with its diagonal).
    #[cfg(test)]
    pub(crate) fn of(adj: &BitMatrix) -> Graph {
        Self::bounded(adj, usize::MAX).expect("no bound")
    }

    /// [`Graph::sparse`] by the build without AVX-512's tests (what a CPU without them runs).
    #[cfg(test)]
    fn sparse_baseline(adj: &BitMatrix) -> Option<Graph> {
        Self::bounded_in::<false>(adj, (SPARSE_KEYS_PER_ROW + 1) * adj.n())
    }

    /// The number of positions.
    pub(crate) fn n(&self) -> usize {
        self.n
    }

    /// How many positions read `k` (its own row left out).
    #[inline]
    pub(crate) fn readers_count(&self, k: usize) -> usize {
        (self.readers_start[k + 1] - self.readers_start[k]) as usize
    }

    /// `readers[k]`: the positions that read `k`, ascending, itself left out (natively built on
    /// first call).
    pub(crate) fn readers(&self) -> &Csr {
        #[cfg(not(target_arch = "wasm32"))]
        return self.readers.get_or_init(|| readers_of(&self.reads, &self.readers_start));
        #[cfg(target_arch = "wasm32")]
        &self.readers
    }

    /// The keys `q` reads, ascending, its own left out (natively, for `Order::new`'s components).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn reads(&self, q: usize) -> &[u32] {
        self.reads.of(q)
    }

    /// Whether `adj` looks sparse enough to try [`Graph::sparse`] on: within its bound on average
    /// over 64 rows spread across it. A guess that spares the masks above the bound a wasted pass
    /// (a window of 64 keys a row would be read halfway before the bound refuses it); a wrong
    /// guess costs time, never a result. Native builds only (`Order::new`).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn likely_sparse(adj: &BitMatrix) -> bool {
        let n = adj.n();
        let rows = n.min(64);
        let ones: usize = (0..rows).map(|i| adj.row_count(i * n / rows)).sum();
        ones <= (SPARSE_KEYS_PER_ROW + 1) * rows
    }

    /// The graph of `m ∨ I` (whether or not `m` holds its diagonal), `None` once the ones read
    /// (diagonal included) pass `bound`.
    fn bounded(m: &BitMatrix, bound: usize) -> Option<Graph> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            #[allow(unsafe_code)]
            // SAFETY: the one requirement of calling a function built for target features is
            // that the CPU has them, and this one has (checked just above).
            return unsafe { Self::bounded_avx512(m, bound) };
        }
        Self::bounded_in::<false>(m, bound)
    }

    /// [`Graph::bounded`] built for AVX-512: a row's non-zero words found by a test of 8 words
    /// at once ([`nonzero_words`]).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,popcnt,bmi1")]
    fn bounded_avx512(m: &BitMatrix, bound: usize) -> Option<Graph> {
        Self::bounded_in::<true>(m, bound)
    }

    /// [`Graph::bounded`], its row scan with AVX-512's tests or not (always inlined, so that each
    /// build compiles it for its own instructions).
    #[inline(always)]
    fn bounded_in<const AVX512: bool>(m: &BitMatrix, bound: usize) -> Option<Graph> {
        let n = m.n();
        let mut start = Vec::with_capacity(n + 1);
        // The keys are written into `list` at `len`, past which it is scratch (room for a whole row
        // is made before each: no capacity check a word, as `Vec::push` would make).
        let mut list = vec![0u32; bound.min(9 * n) + n + 1];
        let mut len = 0;
        // Readers' counts at `k + 1`; natively 64 more, where a word without keys counts
        // nothing at `base + 64` (cut before use).
        let mut count = vec![0u32; n + 1 + if cfg!(target_arch = "wasm32") { 0 } else { WORD_BITS }];
        let (mut ones, mut starts) = (0usize, 0usize);
        start.push(0);
        for q in 0..n {
            if list.len() < len + n + 1 {
                list.resize(2 * list.len() + n + 1, 0);
            }
            let from = len;
            let row = m.row(q);
            // Natively, the row's non-zero words found 64 at a time by vector compares (a sparse
            // row's words are mostly zero: a test and a branch each cost more than the keys: 20%
            // off a random mask's graph at 4096), the diagonal's word among them, then visited
            // one by one: each gives its keys but the diagonal, ascending, their readers' counts,
            // and its interval starts (diagonal included) by a word operation, a run that goes
            // on from the word before not counted again. One pass over the keys, where a second
            // pass over the list took out the diagonal and counted the starts key by key (with
            // the AVX-512 tests, 0.33 → 0.22 ms for a random mask at 4096).
            #[cfg(not(target_arch = "wasm32"))]
            {
                let (diag_word, diag_bit) = (q / WORD_BITS, 1u64 << (q % WORD_BITS));
                // The word before the one visited, and its top bit (a run it ends goes on).
                let (mut before, mut top) = (usize::MAX, 0u64);
                for (c, chunk) in row.chunks(WORD_BITS).enumerate() {
                    let mut nonzero = nonzero_words::<AVX512>(chunk);
                    if diag_word / WORD_BITS == c {
                        nonzero |= 1 << (diag_word % WORD_BITS);
                    }
                    while nonzero != 0 {
                        let i = nonzero.trailing_zeros() as usize;
                        nonzero &= nonzero - 1;
                        let at = c * WORD_BITS + i;
                        let diag = u64::from(at == diag_word) * diag_bit;
                        let with = chunk[i] | diag;
                        let carry = u64::from(before.wrapping_add(1) == at) & top;
                        starts += (with & !((with << 1) | carry)).count_ones() as usize;
                        (before, top) = (at, with >> (WORD_BITS - 1));
                        // Its lowest key written and counted whether or not it has one (most
                        // hold one: a loop's exit would be mispredicted at random), the rest by
                        // a loop seldom entered.
                        let base = (at * WORD_BITS) as u32;
                        let word = chunk[i] & !diag;
                        let k = base + word.trailing_zeros();
                        list[len] = k;
                        len += usize::from(word != 0);
                        count[k as usize + 1] += u32::from(word != 0);
                        let mut rest = word & word.wrapping_sub(1);
                        while rest != 0 {
                            let k = base + rest.trailing_zeros();
                            list[len] = k;
                            len += 1;
                            count[k as usize + 1] += 1;
                            rest &= rest - 1;
                        }
                    }
                }
            }
            // In wasm (a smaller first download), branch-free in the common case: each word's
            // lowest one is written whether or not there is one, and kept if there is (a sparse
            // row's words are zero or hold one key, at random: a branch per word would be
            // mispredicted at every key); then a second pass over the row's keys takes out the
            // diagonal and counts the starts and the readers.
            #[cfg(target_arch = "wasm32")]
            {
                for (w, &word) in row.iter().enumerate() {
                    let base = (w * WORD_BITS) as u32;
                    list[len] = base + word.trailing_zeros();
                    len += usize::from(word != 0);
                    let mut rest = word & word.wrapping_sub(1);
                    while rest != 0 {
                        list[len] = base + rest.trailing_zeros();
                        len += 1;
                        rest &= rest - 1;
                    }
                }
                // The row's keys, ascending, its own left out; the intervals are counted with it in.
                let (mut next, mut own) = (u32::MAX, false);
                let mut kept = from;
                let qk = q as u32;
                for i in from..len {
                    let k = list[i];
                    if !own && k >= qk {
                        own = true;
                        if k > qk {
                            starts += usize::from(qk != next);
                            next = qk + 1;
                        }
                    }
                    starts += usize::from(k != next);
                    next = k + 1;
                    list[kept] = k;
                    kept += usize::from(k != qk);
                    count[k as usize + 1] += 1;
                }
                if !own {
                    starts += usize::from(qk != next);
                }
                if kept < len {
                    count[q + 1] -= 1;
                }
                len = kept;
            }
            ones += len - from + 1;
            if ones > bound {
                return None;
            }
            start.push(len as u32);
        }
        list.truncate(len);
        count.truncate(n + 1);
        for k in 0..n {
            count[k + 1] += count[k];
        }
        let reads = Csr { start, list };
        Some(Graph {
            n,
            #[cfg(target_arch = "wasm32")]
            readers: readers_of(&reads, &count),
            reads,
            #[cfg(not(target_arch = "wasm32"))]
            readers: std::sync::OnceLock::new(),
            readers_start: count,
            scattered: starts > 4 * n,
        })
    }
}

/// Bit `i` set when `chunk[i]` (at most 64 words) is not zero, found 8 words at a time (vector
/// compares natively).
/// With `AVX512` (in a function built for it, on a CPU that has it), a whole chunk of 64 words
/// by eight tests of 8 words.
#[cfg(not(target_arch = "wasm32"))]
#[inline(always)]
fn nonzero_words<const AVX512: bool>(chunk: &[u64]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if AVX512 && chunk.len() == WORD_BITS {
        use std::arch::x86_64::{_mm512_loadu_si512, _mm512_test_epi64_mask};
        let mut nonzero = 0u64;
        for e in 0..8 {
            #[allow(unsafe_code)]
            // SAFETY: `AVX512` is set in `Graph::bounded_avx512` alone, called once the CPU is
            // known to have AVX-512F; words `8e..8e + 8` are within the chunk's 64 (an unaligned
            // load).
            let eight = unsafe { _mm512_loadu_si512(chunk.as_ptr().add(8 * e).cast()) };
            #[allow(unsafe_code)]
            // SAFETY: as above.
            let byte = unsafe { _mm512_test_epi64_mask(eight, eight) };
            nonzero |= u64::from(byte) << (8 * e);
        }
        return nonzero;
    }
    let mut nonzero = 0u64;
    let mut eights = chunk.chunks_exact(8);
    for (e, eight) in eights.by_ref().enumerate() {
        let mut byte = 0u8;
        for (i, &word) in eight.iter().enumerate() {
            byte |= u8::from(word != 0) << i;
        }
        nonzero |= u64::from(byte) << (8 * e);
    }
    let done = chunk.len() - eights.remainder().len();
    for (i, &word) in eights.remainder().iter().enumerate() {
        nonzero |= u64::from(word != 0) << (done + i);
    }
    nonzero
}

/// The readers' lists of `reads`, whose readers start at `start` (`start[k]` for key `k`).
fn readers_of(reads: &Csr, start: &[u32]) -> Csr {
    let mut at = start.to_vec();
    let mut list = vec![0; reads.list.len()];
    for q in 0..start.len() - 1 {
        for &k in reads.of(q) {
            let at = &mut at[k as usize];
            list[*at as usize] = q as u32;
            *at += 1;
        }
    }
    Csr { start: start.to_vec(), list }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// The one-pass graph against the definitions it replaced, on random masks from empty to
    /// past the sparsity bound (rows of one key a word, of several, and dense runs): both
    /// directions hold every key but the diagonal, ascending; the scattering is the count of
    /// interval starts (diagonal included) against `4 n`; the bound refuses exactly the masks
    /// with more than `33 n` ones. The graph of a mask is that of the mask with its diagonal,
    /// whether the mask holds none, some or all of it.
    #[test]
    fn the_graph_of_one_pass_is_the_mask_less_its_diagonal() {
        let mut rng = SplitMix64::new(31);
        let (mut refused, mut scattered, mut compact) = (0, 0, 0);
        for case in 0..400 {
            let n = [0, 1, 2, 63, 64, 65, 130, 200][case % 8];
            let p = [0.0, 0.01, 0.05, 0.2, 0.4, 0.6][case % 6];
            let runs = case % 3 == 0;
            let mut m =
                BitMatrix::from_fn(n, |q, k| if runs { q.abs_diff(k) < (case % 40) } else { rng.next_f64() < p });
            for q in 0..n {
                m.set(q, q, true);
            }
            let ones = m.count_ones();
            // The same mask with some or all of its diagonal left out gives the same graph.
            let mut without = m.clone();
            for q in 0..n {
                if case % 4 == 0 || rng.below(2) == 0 {
                    without.set(q, q, false);
                }
            }
            let g_without = Graph::sparse(&without);
            assert_eq!(g_without.is_some(), Graph::sparse(&m).is_some(), "case {case}: refused either way");
            // Both builds of the row scan give the same graph (this CPU's, and the baseline's).
            let (fast, base) = (Graph::sparse(&without), Graph::sparse_baseline(&without));
            assert_eq!(
                fast.map(|g| (g.reads.start, g.reads.list, g.readers_start, g.scattered)),
                base.map(|g| (g.reads.start, g.reads.list, g.readers_start, g.scattered)),
                "case {case}: the builds"
            );
            let Some(g) = Graph::sparse(&m) else {
                assert!(ones > (SPARSE_KEYS_PER_ROW + 1) * n, "case {case}: {ones} ones refused");
                refused += 1;
                continue;
            };
            assert!(ones <= (SPARSE_KEYS_PER_ROW + 1) * n, "case {case}: {ones} ones kept");
            assert_eq!(g.n(), n);
            let mut starts = 0;
            for q in 0..n {
                let keys: Vec<u32> = m.row_ones(q).filter(|&k| k != q).map(|k| k as u32).collect();
                assert_eq!(g.reads.of(q), &keys[..], "case {case}: reads of {q}");
                let readers: Vec<u32> = (0..n).filter(|&r| r != q && m.get(r, q)).map(|r| r as u32).collect();
                assert_eq!(g.readers().of(q), &readers[..], "case {case}: readers of {q}");
                assert_eq!(g.readers_count(q), readers.len(), "case {case}: readers of {q}");
                starts += (0..n).filter(|&k| m.get(q, k) && (k == 0 || !m.get(q, k - 1))).count();
            }
            assert_eq!(g.scattered, starts > 4 * n, "case {case}: scattered");
            let g_without = g_without.expect("kept either way");
            assert_eq!(
                (&g_without.reads.start, &g_without.reads.list, &g_without.readers().start, &g_without.readers().list),
                (&g.reads.start, &g.reads.list, &g.readers().start, &g.readers().list),
                "case {case}: without the diagonal"
            );
            assert_eq!(g_without.scattered, g.scattered, "case {case}: scattered without the diagonal");
            scattered += usize::from(g.scattered);
            compact += usize::from(!g.scattered && n > 0);
        }
        assert!(
            refused > 20 && scattered > 20 && compact > 20,
            "{refused} refused, {scattered} scattered, {compact} compact"
        );
    }

    /// Rows of several 64-word chunks (whose non-zero words are found a chunk at a time natively):
    /// the lists are the rows' keys, the diagonal left out, whether the words hold one key, a few,
    /// or runs across words, and wherever the chunks end (n = 600: one chunk of 10 words; 4200:
    /// a chunk of 64 and one of 2).
    #[test]
    fn the_lists_of_long_rows_are_their_keys() {
        let mut rng = SplitMix64::new(5);
        for (n, p, run) in [(600, 0.02, 0), (4200, 0.002, 0), (4200, 0.0005, 40), (4200, 0.0, 300)] {
            let mut m = BitMatrix::from_fn(n, |_, _| rng.next_f64() < p);
            for q in (0..n).step_by(7) {
                let from = rng.below(n);
                for k in from..n.min(from + run) {
                    m.set(q, k, true);
                }
            }
            let g = Graph::of(&m);
            let base = Graph::bounded_in::<false>(&m, usize::MAX).expect("no bound");
            assert_eq!(
                (&g.reads.start, &g.reads.list, &g.readers_start, g.scattered),
                (&base.reads.start, &base.reads.list, &base.readers_start, base.scattered),
                "n = {n}, p = {p}, runs {run}: the builds"
            );
            let mut readers = vec![0; n];
            for q in 0..n {
                let keys: Vec<u32> = m.row_ones(q).filter(|&k| k != q).map(|k| k as u32).collect();
                assert_eq!(g.reads.of(q), &keys[..], "n = {n}, p = {p}, runs {run}: reads of {q}");
                for &k in &keys {
                    readers[k as usize] += 1;
                }
            }
            assert!((0..n).all(|k| g.readers_count(k) == readers[k]), "n = {n}: readers' counts");
        }
    }
}
