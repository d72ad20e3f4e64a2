//! The partial order of a mask: limit closure, equivalence classes, Hasse diagram, height and
//! width (THEORY §1-4). [`crate::analysis`] adds what depends on the layers (`L*`, growth).
//!
//! # Algorithm
//! 1. `Ā = M ∨ I` (residual self-loops).
//! 2. Strongly connected components by an iterative Tarjan over the bit rows. Tarjan emits
//!    components sinks-first in the "reads" graph, which is a topological order of information
//!    flow: every class comes after all classes it reads.
//! 3. Positions are relabelled so that classes are contiguous and in that order (skipped when the
//!    identity already is such an order, as for causal-like masks).
//! 4. Closure rows class by class in topological order. The keys read by the class are candidates;
//!    the candidate of *highest* topological rank is taken first, its closure row is OR-ed in and
//!    everything it already covers is struck from the candidates. The candidates that survive to be
//!    taken are exactly the classes covered by this class, so the Hasse diagram falls out of the
//!    closure for free and the word work is `O((hasse edges + classes) · n / 64)`, not
//!    `O(edges · n / 64)`. When relabelled, the same ORs build each class's row in original
//!    positions too, so that no bit of the closure is moved back one at a time.
//! 5. The closure is kept as one row per class; the `n x n` matrix is built from them when first
//!    asked for ([`Order::closure`]: the layers and the class queries read the rows). When each
//!    class is one position, the rows are the matrix, built here.

use std::cell::OnceCell;

use crate::bits::{BitMatrix, Ones, WORD_BITS, get_bit, or_into, set_bit, words_for};

mod graph;

use crate::sparse::Graph;
use graph::augment;
pub(crate) use graph::tarjan;
#[cfg(not(target_arch = "wasm32"))]
use graph::tarjan_reads;

const UNVISITED: u32 = u32::MAX;

/// The order of a mask used in every layer (its closure, classes and Hasse diagram): what
/// [`crate::Analysis`] computes before, and without, the layers.
#[derive(Clone, Debug)]
pub struct Order {
    /// The reads graph of a sparse mask (the frontier BFS's, built once for the components and the
    /// layers), `None` for the others. Native builds only (see `Order::new`).
    #[cfg(not(target_arch = "wasm32"))]
    sparse: Option<Graph>,
    n: usize,
    /// The closure, one row per class in original positions (`row_of[c]` is class `c`'s): every
    /// member of a class sees what it sees. Empty when each class is one position: the rows are
    /// then the `n x n` closure itself, built with the order.
    rows: Vec<u64>,
    row_of: Vec<usize>,
    /// The `n x n` closure: built from `rows` on first use (the layers and the class queries need
    /// only `rows`), or with the order when each class is one position.
    closure: OnceCell<BitMatrix>,
    class_of: Vec<usize>,
    classes: Vec<Vec<usize>>,
    hasse: Vec<(usize, usize)>,
    /// `|R|`, the cells of the closure.
    limit_cells: usize,
    /// `Ā = M ∨ I`; natively, for a sparse mask, built from its graph on first use (the order
    /// and the frontier BFS need only the graph: a copy of the `n x n` mask less).
    adj: OnceCell<BitMatrix>,
    dense: bool,
    height: usize,
}

/// Row `into` of `bits` (rows of `words` words) to write, and row `from` (another) to read.
fn two_rows(bits: &mut [u64], words: usize, into: usize, from: usize) -> (&mut [u64], &[u64]) {
    debug_assert_ne!(into, from);
    if into < from {
        let (a, b) = bits.split_at_mut(from * words);
        (&mut a[into * words..(into + 1) * words], &b[..words])
    } else {
        let (a, b) = bits.split_at_mut(into * words);
        (&mut b[..words], &a[from * words..(from + 1) * words])
    }
}

impl Order {
    /// The order of `mask`.
    ///
    /// Complexity: `O(n²/64 + ones(M))` for the components and relabelling, plus
    /// `O((hasse edges + classes) · n/64)` for the closure (a row per class) and Hasse diagram.
    /// Memory: `Ā` (none for a sparse mask: its graph) and two rows per class (a few `n x n` bit
    /// matrices at most, 2 MiB each at n = 4096); the `n x n` closure when first asked for.
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn new(mask: &BitMatrix) -> Order {
        let n = mask.n();
        // Natively, a sparse mask's components come from its lists, not its bit rows (one pass over
        // the rows builds the lists, which the layers' frontier BFS then uses too: 0.6 ms off a
        // random mask at 4096), and so do its classes' candidates and its density: `Ā` is not
        // copied. In wasm they come from the bit rows as before: the lists' code would cost every
        // visitor's first download 0.9 KB (docs/BENCHMARKS.md, stop 40).
        #[cfg(not(target_arch = "wasm32"))]
        let sparse = Graph::likely_sparse(mask).then(|| Graph::sparse(mask)).flatten();
        #[cfg(not(target_arch = "wasm32"))]
        let graph = sparse.as_ref();
        #[cfg(target_arch = "wasm32")]
        let graph: Option<&Graph> = None;
        let adj = OnceCell::new();
        if graph.is_none() {
            let _ = adj.set(mask.with_diagonal());
        }
        let (comp_of, comp_count) = match (graph, adj.get()) {
            #[cfg(not(target_arch = "wasm32"))]
            (Some(graph), _) => tarjan_reads(n, |v| graph.reads(v)),
            (_, Some(adj)) => tarjan(adj),
            _ => unreachable!("a graph or the mask with its diagonal"),
        };

        // Relabel: positions sorted by (topological class rank, position), by counting (the
        // positions of a class stay ascending).
        let mut start = vec![0usize; comp_count + 1];
        for &c in &comp_of {
            start[c as usize + 1] += 1;
        }
        for c in 0..comp_count {
            start[c + 1] += start[c];
        }
        let mut order = vec![0usize; n];
        let mut fill = start.clone();
        for (p, &c) in comp_of.iter().enumerate() {
            order[fill[c as usize]] = p;
            fill[c as usize] += 1;
        }
        let identity = order.iter().enumerate().all(|(i, &p)| i == p);
        // rank[p] = index of position p in `order` (only needed when that is not the identity).
        let mut rank = Vec::new();
        if !identity {
            rank = vec![0usize; n];
            for (i, &p) in order.iter().enumerate() {
                rank[p] = i;
            }
        }

        let words = words_for(n);
        let mut class_rows = vec![0u64; comp_count * words];
        // Relabelled, each class's row is also built in original positions, alongside its
        // topological one (an OR of the same rows): one word pass per covering pair, where moving
        // each bit of each row back to its position cost a step per cell of the closure (16 ms
        // for a butterfly of 4095 positions). When each class is one position, its row goes to
        // that position's: these rows are then the `n x n` closure.
        let singletons = comp_count == n;
        let slot = |c: usize| if singletons { order[start[c]] } else { c };
        let mut original_rows = if identity { Vec::new() } else { vec![0u64; comp_count * words] };
        let mut cand = vec![0u64; words];
        let mut read = vec![0u64; words];
        let mut topo_hasse: Vec<(usize, usize)> = Vec::new();
        let mut chain_height = vec![1usize; comp_count];
        for c in 0..comp_count {
            let (s, e) = (start[c], start[c + 1]);
            let (done, rest) = class_rows.split_at_mut(c * words);
            let row = &mut rest[..words];
            for i in s..e {
                set_bit(row, i);
            }
            if !identity {
                let at = slot(c);
                for &q in &order[s..e] {
                    set_bit(&mut original_rows[at * words..(at + 1) * words], q);
                }
            }
            if s == 0 {
                continue;
            }
            // Candidates: keys read by members of the class, strictly before the class.
            let top_word = (s - 1) / WORD_BITS;
            cand[..=top_word].fill(0);
            if let Some(graph) = graph {
                // The members' keys from their lists: Σ |keys read|, not their rows' words.
                for &q in &order[s..e] {
                    for &k in graph.reads.of(q) {
                        let r = if identity { k as usize } else { rank[k as usize] };
                        if r < s {
                            set_bit(&mut cand, r);
                        }
                    }
                }
            } else if let Some(adj) = adj.get().filter(|_| identity) {
                for i in s..e {
                    or_into(&mut cand[..=top_word], &adj.row(i)[..=top_word]);
                }
            } else if let Some(adj) = adj.get() {
                // OR the members' rows in original positions, then move each key to its rank:
                // Σ over classes of |keys read| bit moves, never a permuted copy of the matrix.
                read.fill(0);
                for &q in &order[s..e] {
                    or_into(&mut read, adj.row(q));
                }
                for k in Ones::new(&read) {
                    if rank[k] < s {
                        set_bit(&mut cand, rank[k]);
                    }
                }
            }
            let rem = s % WORD_BITS;
            if rem != 0 {
                cand[top_word] &= (1u64 << rem) - 1;
            }
            let mut w = top_word as isize;
            while w >= 0 {
                let word = cand[w as usize];
                if word == 0 {
                    w -= 1;
                    continue;
                }
                let k = w as usize * WORD_BITS + (63 - word.leading_zeros() as usize);
                let p = comp_of[order[k]] as usize;
                topo_hasse.push((p, c));
                chain_height[c] = chain_height[c].max(chain_height[p] + 1);
                let prow = &done[p * words..(p + 1) * words];
                // p's closure ends with p's own members, which may reach past word w.
                let upto = (start[p + 1] - 1) / WORD_BITS + 1;
                or_into(&mut row[..upto], &prow[..upto]);
                if !identity {
                    let (into, from) = two_rows(&mut original_rows, words, slot(c), slot(p));
                    or_into(into, from);
                }
                let cut = upto.min(w as usize + 1);
                for (cw, pw) in cand[..cut].iter_mut().zip(&prow[..cut]) {
                    *cw &= !pw;
                }
            }
        }

        // Public class numbering: by smallest member (order[start[c]] is the smallest member).
        let mut keyed: Vec<(usize, usize)> = (0..comp_count).map(|c| (order[start[c]], c)).collect();
        keyed.sort_unstable();
        let by_min: Vec<usize> = keyed.into_iter().map(|(_, c)| c).collect();
        let mut rank = vec![0usize; comp_count];
        for (r, &c) in by_min.iter().enumerate() {
            rank[c] = r;
        }
        let classes: Vec<Vec<usize>> = by_min
            .iter()
            .map(|&c| {
                let mut members = order[start[c]..start[c + 1]].to_vec();
                members.sort_unstable();
                members
            })
            .collect();
        let class_of: Vec<usize> = comp_of.iter().map(|&c| rank[c as usize]).collect();
        let mut hasse: Vec<(usize, usize)> = topo_hasse.iter().map(|&(a, b)| (rank[a], rank[b])).collect();
        hasse.sort_unstable();
        let height = chain_height.iter().copied().max().unwrap_or(0);
        // Each class's closure row, in original positions (the topological rows are those when
        // the order is the identity).
        let ones: Vec<usize> = (0..comp_count)
            .map(|c| class_rows[c * words..(c + 1) * words].iter().map(|w| w.count_ones() as usize).sum())
            .collect();
        let mut rows = if identity { class_rows } else { original_rows };

        // `Ā ⊆ R`: dense when each row holds as many ones (a sparse mask's from its class's row).
        let dense = match (graph, adj.get()) {
            (Some(graph), _) => (0..n).all(|q| graph.reads.of(q).len() + 1 == ones[comp_of[q] as usize]),
            (_, Some(adj)) => (0..n).all(|q| {
                let c = slot(comp_of[q] as usize);
                adj.row(q) == &rows[c * words..(c + 1) * words]
            }),
            _ => unreachable!("a graph or the mask with its diagonal"),
        };
        let limit_cells = (0..comp_count).map(|c| ones[c] * (start[c + 1] - start[c])).sum();
        let closure = OnceCell::new();
        if singletons {
            let _ = closure.set(BitMatrix::from_words(n, std::mem::take(&mut rows)));
        }
        Order {
            #[cfg(not(target_arch = "wasm32"))]
            sparse,
            n,
            rows,
            row_of: by_min,
            closure,
            limit_cells,
            class_of,
            classes,
            hasse,
            adj,
            dense,
            height,
        }
    }

    /// `Ā = M ∨ I`, the mask with its residual self-loops.
    pub(crate) fn adj(&self) -> &BitMatrix {
        self.adj.get_or_init(|| {
            #[cfg(not(target_arch = "wasm32"))]
            if let Some(graph) = &self.sparse {
                let mut adj = BitMatrix::identity(self.n());
                for q in 0..self.n() {
                    for &k in graph.reads.of(q) {
                        adj.set(q, k as usize, true);
                    }
                }
                return adj;
            }
            BitMatrix::identity(self.n())
        })
    }

    /// The reads graph, when the mask looked sparse and is ([`Graph::sparse`]; natively only).
    pub(crate) fn sparse_graph(&self) -> Option<&Graph> {
        #[cfg(not(target_arch = "wasm32"))]
        return self.sparse.as_ref();
        #[cfg(target_arch = "wasm32")]
        None
    }

    /// Side length `n` of the mask.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The limit `R`: `R[q][k]` iff `q` sees `k` after enough layers (reflexive-transitive closure).
    ///
    /// Built on first call from the classes' rows (`O(n²/64)`), then kept.
    pub fn closure(&self) -> &BitMatrix {
        self.closure.get_or_init(|| {
            let words = words_for(self.n);
            let mut bits = vec![0u64; self.n * words];
            for (row, &c) in bits.chunks_exact_mut(words.max(1)).zip(&self.class_of) {
                row.copy_from_slice(self.class_row(c));
            }
            BitMatrix::from_words(self.n, bits)
        })
    }

    /// Class `class`'s row of the closure (that of each of its members), in original positions.
    #[inline(never)] // Not inlined into each class query of the app (the first download).
    pub(crate) fn class_row(&self, class: usize) -> &[u64] {
        match self.closure.get() {
            Some(closure) if self.rows.is_empty() => closure.row(self.classes[class][0]),
            _ => {
                let (words, r) = (words_for(self.n), self.row_of[class]);
                &self.rows[r * words..(r + 1) * words]
            }
        }
    }

    /// The number of cells of the limit, `closure().count_ones()` without building the matrix.
    pub fn limit_cells(&self) -> usize {
        self.limit_cells
    }

    /// Whether `M ∨ I` already equals its closure (one layer reaches the limit).
    pub fn is_dense(&self) -> bool {
        self.dense
    }

    /// Equivalence classes (strongly connected components of `Ā`), each sorted, ordered by
    /// smallest member.
    pub fn classes(&self) -> &[Vec<usize>] {
        &self.classes
    }

    /// The class index of each position.
    pub fn class_of(&self) -> &[usize] {
        &self.class_of
    }

    /// Hasse diagram: covering pairs `(lower, upper)` of class indices, sorted. Information flows
    /// from `lower` to `upper`.
    pub fn hasse_edges(&self) -> &[(usize, usize)] {
        &self.hasse
    }

    /// Height of the class order: the number of classes on a longest chain (0 for `n = 0`).
    pub fn height(&self) -> usize {
        self.height
    }

    /// Whether class `lower ≤ upper` in the partial order (`upper` sees `lower`).
    pub fn class_le(&self, lower: usize, upper: usize) -> bool {
        get_bit(self.class_row(upper), self.classes[lower][0])
    }

    /// The positions class `class` sees in the limit (its down-set, its own members included),
    /// ascending.
    ///
    /// # Panics
    /// If `class` is not a class index.
    pub fn down_set(&self, class: usize) -> Vec<usize> {
        Ones::new(self.class_row(class)).collect()
    }

    /// How many positions see class `class` in the limit (the size of its up-set, its own
    /// members included).
    ///
    /// # Panics
    /// If `class` is not a class index.
    pub fn seen_by(&self, class: usize) -> usize {
        let rep = self.classes[class][0];
        (0..self.classes.len()).filter(|&c| get_bit(self.class_row(c), rep)).map(|c| self.classes[c].len()).sum()
    }

    /// The strictly comparable class pairs `(lower, upper)` (`upper` sees `lower`), in order of
    /// `lower` then `upper`, at most `limit` of them; `true` when the list was cut at `limit`.
    ///
    /// Complexity: `O(C²)` for `C` classes (stops at `limit`).
    pub fn comparable_pairs(&self, limit: usize) -> (Vec<(usize, usize)>, bool) {
        let c = self.classes.len();
        let mut pairs = Vec::new();
        for lo in 0..c {
            for up in 0..c {
                if lo != up && self.class_le(lo, up) {
                    if pairs.len() == limit {
                        return (pairs, true);
                    }
                    pairs.push((lo, up));
                }
            }
        }
        (pairs, false)
    }

    /// Width of the class order: the size of a largest antichain (a set of classes none of which
    /// sees another).
    ///
    /// Computed by Dilworth's theorem as `classes − maximum matching` in the bipartite graph of
    /// strict comparabilities (Fulkerson's reduction), with a greedy start and Kuhn's augmenting
    /// paths over bitsets.
    ///
    /// Complexity: `O(C² / 64)` to build the up-sets plus `O(C · (C²/64))` in the worst case for
    /// the augmenting searches, `C` the number of classes; chains and antichains take `O(C²/64)`.
    pub fn width(&self) -> usize {
        let c = self.classes.len();
        let words = words_for(c);
        // up[a] = { b : a < b }.
        let mut up = vec![0u64; c * words];
        for b in 0..c {
            for k in Ones::new(self.class_row(b)) {
                let a = self.class_of[k];
                if a != b {
                    set_bit(&mut up[a * words..(a + 1) * words], b);
                }
            }
        }
        let mut match_right = vec![UNVISITED; c];
        let mut matched_left = vec![false; c];
        let mut matching = 0;
        // Greedy start: the lowest unmatched strict successor.
        for a in 0..c {
            if let Some(b) = Ones::new(&up[a * words..(a + 1) * words]).find(|&b| match_right[b] == UNVISITED) {
                match_right[b] = a as u32;
                matched_left[a] = true;
                matching += 1;
            }
        }
        let mut visited = vec![0u64; words];
        let mut path: Vec<(usize, usize)> = Vec::new();
        for (a, matched) in matched_left.iter_mut().enumerate() {
            if *matched {
                continue;
            }
            visited.fill(0);
            if augment(a, &up, words, &mut visited, &mut match_right, &mut path) {
                *matched = true;
                matching += 1;
            }
        }
        c - matching
    }
}

/// Sorted positions as maximal runs of consecutive values, `(first, last)`: `[0, 1, 2, 5]` gives
/// `[(0, 2), (5, 5)]`. Captions of classes (DOT, SVG, the app) are written from these.
pub fn position_runs(members: &[usize]) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &p in members {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == p => *last = p,
            _ => runs.push((p, p)),
        }
    }
    runs
}
