//! The analysis of one mask repeated in every layer: limit closure, equivalence classes, Hasse
//! diagram, convergence depth `L*`, per-layer growth, height and width (THEORY §1-4).
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
//!    `O(edges · n / 64)`.
//! 5. `L*` and the growth curve: when every row of `Ā` is at most
//!    [`crate::reach::DEFAULT_MAX_ROW_INTERVALS`] intervals, by the structured reach engine
//!    ([`crate::reach::repeated_growth`], `O(L* · n)` for windows); otherwise by a semi-naive ("delta") layer sweep: a row only ORs the cells that
//!    were *new* in the previous layer, each over its non-zero word span, and a row leaves the sweep
//!    once it holds its limit. Dense masks are answered without a sweep (`L* ≤ 1`).

use std::cell::OnceCell;

use crate::bits::{BitMatrix, Ones, WORD_BITS, or_into, set_bit, words_for};

const UNVISITED: u32 = u32::MAX;

/// Everything the order theory says about a mask used in every layer.
///
/// # Examples
/// ```
/// use hasseflow_core::{Analysis, BitMatrix};
/// // prefix-LM, n = 5, prefix 2 (THEORY §8)
/// let mask = BitMatrix::from_fn(5, |q, k| k <= q || k < 2);
/// let a = Analysis::new(&mask);
/// assert_eq!(a.depth(), 1);
/// assert!(a.is_dense());
/// assert_eq!(a.classes(), &[vec![0, 1], vec![2], vec![3], vec![4]]);
/// assert_eq!(a.hasse_edges(), &[(0, 1), (1, 2), (2, 3)]);
/// ```
#[derive(Clone, Debug)]
pub struct Analysis {
    closure: BitMatrix,
    class_of: Vec<usize>,
    classes: Vec<Vec<usize>>,
    hasse: Vec<(usize, usize)>,
    adj: BitMatrix,
    dense: bool,
    /// `(L*, growth)`, computed on first use.
    layers: OnceCell<(usize, Vec<usize>)>,
    height: usize,
}

impl Analysis {
    /// Analyses `mask`.
    ///
    /// Complexity: `O(n²/64 + ones(M))` for the components and relabelling, plus
    /// `O((hasse edges + classes) · n/64)` for the closure and Hasse diagram. `L*` and the growth
    /// curve are computed on first use ([`Analysis::depth`], [`Analysis::growth`]): free for dense
    /// masks, else a layer sweep of `O(L* · ones(M) + Σ spans)` word operations, where a span is
    /// the word range of a row's new cells in one layer (about `w/64 + 2` words for a window `w`).
    /// Memory: a few `n x n` bit matrices (2 MiB each at n = 4096).
    pub fn new(mask: &BitMatrix) -> Analysis {
        let n = mask.n();
        let adj = mask.with_diagonal();
        let (comp_of, comp_count) = tarjan(&adj);

        // Relabel: positions sorted by (topological class rank, position).
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&p| (comp_of[p], p));
        let identity = order.iter().enumerate().all(|(i, &p)| i == p);
        let mut start = vec![0usize; comp_count + 1];
        for &c in &comp_of {
            start[c as usize + 1] += 1;
        }
        for c in 0..comp_count {
            start[c + 1] += start[c];
        }
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
            if s == 0 {
                continue;
            }
            // Candidates: keys read by members of the class, strictly before the class.
            let top_word = (s - 1) / WORD_BITS;
            cand[..=top_word].fill(0);
            if identity {
                for i in s..e {
                    or_into(&mut cand[..=top_word], &adj.row(i)[..=top_word]);
                }
            } else {
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
                let cut = upto.min(w as usize + 1);
                for (cw, pw) in cand[..cut].iter_mut().zip(&prow[..cut]) {
                    *cw &= !pw;
                }
            }
        }

        // Closure in original positions: one unpermuted row per class, copied to its members.
        let mut closure_bits = vec![0u64; n * words];
        let mut unpermuted = vec![0u64; words];
        for c in 0..comp_count {
            let row = &class_rows[c * words..(c + 1) * words];
            let src: &[u64] = if identity {
                row
            } else {
                unpermuted.fill(0);
                for j in Ones::new(row) {
                    set_bit(&mut unpermuted, order[j]);
                }
                &unpermuted
            };
            for &q in &order[start[c]..start[c + 1]] {
                closure_bits[q * words..(q + 1) * words].copy_from_slice(src);
            }
        }
        let closure = BitMatrix::from_words(n, closure_bits);

        // Public class numbering: by smallest member (order[start[c]] is the smallest member).
        let mut by_min: Vec<usize> = (0..comp_count).collect();
        by_min.sort_by_key(|&c| order[start[c]]);
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

        let dense = adj == closure;
        Analysis { closure, class_of, classes, hasse, adj, dense, layers: OnceCell::new(), height }
    }

    /// `L*` and the growth curve, computed on first use: the order (closure, classes, Hasse) does
    /// not need them, and for sparse masks the sweep costs more than the order.
    fn layers(&self) -> &(usize, Vec<usize>) {
        self.layers.get_or_init(|| {
            let (adj, closure) = (&self.adj, &self.closure);
            let n = adj.n();
            if adj.count_ones() == n {
                (0, vec![n])
            } else if self.dense {
                (1, vec![n, closure.count_ones()])
            } else if let Some(growth) =
                crate::reach::repeated_growth(adj, closure.count_ones(), crate::reach::DEFAULT_MAX_ROW_INTERVALS)
            {
                // Rows of few intervals: the structured engine, O(L* · n · intervals).
                (growth.len() - 1, growth)
            } else {
                let targets: Vec<usize> = (0..n).map(|q| closure.row_count(q)).collect();
                let mut growth = vec![n];
                let depth = layer_sweep(adj, Some(&targets), |layer, _, _, _, new| {
                    if growth.len() <= layer {
                        growth.push(*growth.last().unwrap_or(&0));
                    }
                    growth[layer] += new.count_ones() as usize;
                });
                (depth, growth)
            }
        })
    }

    /// Takes `L*` and the growth curve from the first-reach matrix of the same mask, so that a
    /// caller who needs both (the app, on every edit) runs the layer sweep once, not twice.
    ///
    /// # Panics
    /// If `first_reach` is for a mask of another size, or (checked cheaply) reaches a different
    /// limit.
    pub fn with_first_reach(self, first_reach: &FirstReach) -> Analysis {
        assert_eq!(first_reach.n(), self.n(), "first-reach matrix of another mask");
        let growth = first_reach.growth();
        assert_eq!(growth.last().copied(), Some(self.closure.count_ones()), "first-reach matrix of another mask");
        let _ = self.layers.set((first_reach.depth(), growth));
        self
    }

    /// Side length `n` of the mask.
    pub fn n(&self) -> usize {
        self.closure.n()
    }

    /// The limit `R`: `R[q][k]` iff `q` sees `k` after enough layers (reflexive-transitive closure).
    pub fn closure(&self) -> &BitMatrix {
        &self.closure
    }

    /// Convergence depth `L* = min{L : R(L) = R(L+1)}`.
    ///
    /// Computed on first call by the layer sweep (see [`Analysis::new`] for its cost) and cached.
    pub fn depth(&self) -> usize {
        self.layers().0
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

    /// `|R(L)|`, the number of reached cells, for `L = 0..=L*`.
    pub fn growth(&self) -> &[usize] {
        &self.layers().1
    }

    /// Height of the class order: the number of classes on a longest chain (0 for `n = 0`).
    pub fn height(&self) -> usize {
        self.height
    }

    /// Whether class `lower ≤ upper` in the partial order (`upper` sees `lower`).
    pub fn class_le(&self, lower: usize, upper: usize) -> bool {
        self.closure.get(self.classes[upper][0], self.classes[lower][0])
    }

    /// The positions class `class` sees in the limit (its down-set, its own members included),
    /// ascending.
    ///
    /// # Panics
    /// If `class` is not a class index.
    pub fn down_set(&self, class: usize) -> Vec<usize> {
        self.closure.row_ones(self.classes[class][0]).collect()
    }

    /// How many positions see class `class` in the limit (the size of its up-set, its own
    /// members included).
    ///
    /// # Panics
    /// If `class` is not a class index.
    pub fn seen_by(&self, class: usize) -> usize {
        let rep = self.classes[class][0];
        (0..self.n()).filter(|&q| self.closure.get(q, rep)).count()
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
            let rep = self.classes[b][0];
            for k in self.closure.row_ones(rep) {
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

/// Kuhn's augmenting path search from left vertex `root`, iterative, over bitset adjacency.
fn augment(
    root: usize,
    up: &[u64],
    words: usize,
    visited: &mut [u64],
    match_right: &mut [u32],
    path: &mut Vec<(usize, usize)>,
) -> bool {
    path.clear();
    // Depth-first search; `path` holds the (left, right) pairs of the current alternating path.
    fn next_free(adj: &[u64], visited: &[u64]) -> Option<usize> {
        for (i, (a, v)) in adj.iter().zip(visited).enumerate() {
            let w = a & !v;
            if w != 0 {
                return Some(i * WORD_BITS + w.trailing_zeros() as usize);
            }
        }
        None
    }
    let mut left = root;
    loop {
        let adj = &up[left * words..(left + 1) * words];
        match next_free(adj, visited) {
            Some(b) => {
                set_bit(visited, b);
                if match_right[b] == UNVISITED {
                    // Flip the path.
                    match_right[b] = left as u32;
                    // Walk back: each earlier (left, right) pair of the path takes its right.
                    while let Some((l, r)) = path.pop() {
                        match_right[r] = l as u32;
                    }
                    return true;
                }
                path.push((left, b));
                left = match_right[b] as usize;
            }
            None => match path.pop() {
                Some((l, _)) => left = l,
                None => return false,
            },
        }
    }
}

/// Iterative Tarjan over the "reads" graph `q -> k` (row `q` of `adj`). Returns the component of
/// each vertex and the number of components; component ids are in emission order, which is a
/// topological order of information flow (a class comes after every class it reads).
///
/// Neighbours that are already in a finished component can change nothing, so they are skipped a
/// word at a time (`row & (unvisited | on_stack)`): a causal or block-causal mask costs
/// `O(n²/64 + edges inside classes)` instead of `O(edges)`.
///
/// Complexity: `O(n²/64 + ones(adj))` in the worst case.
pub(crate) fn tarjan(adj: &BitMatrix) -> (Vec<u32>, usize) {
    let n = adj.n();
    let words = words_for(n);
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0u32; n];
    // Bit set for vertices that are unvisited or on the stack: the only neighbours that matter.
    let mut live = vec![!0u64; words];
    let mut stack: Vec<usize> = Vec::new();
    let mut comp = vec![UNVISITED; n];
    let mut comps = 0usize;
    let mut counter = 0u32;
    // Frames: (vertex, word cursor, remaining bits of that word).
    let mut call: Vec<(usize, usize, u64)> = Vec::new();
    for root in 0..n {
        if index[root] != UNVISITED {
            continue;
        }
        index[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root);
        call.push((root, 0, adj.row(root).first().copied().unwrap_or(0)));
        while let Some(frame) = call.last_mut() {
            let v = frame.0;
            // Next relevant neighbour of v, re-masked by `live` since the children may have
            // finished components meanwhile.
            let mut next = None;
            loop {
                frame.2 &= live[frame.1];
                if frame.2 != 0 {
                    let bit = frame.2.trailing_zeros() as usize;
                    frame.2 &= frame.2 - 1;
                    next = Some(frame.1 * WORD_BITS + bit);
                    break;
                }
                frame.1 += 1;
                if frame.1 >= words {
                    break;
                }
                frame.2 = adj.row(v)[frame.1];
            }
            if let Some(w) = next {
                if index[w] == UNVISITED {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    call.push((w, 0, adj.row(w).first().copied().unwrap_or(0)));
                } else {
                    // Live and visited: on the stack.
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(parent, _, _)) = call.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    while let Some(x) = stack.pop() {
                        live[x / WORD_BITS] &= !(1u64 << (x % WORD_BITS));
                        comp[x] = comps as u32;
                        if x == v {
                            break;
                        }
                    }
                    comps += 1;
                }
            }
        }
    }
    (comp, comps)
}

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
const NEVER: u16 = u16::MAX;

impl FirstReach {
    /// Computes the first-reach matrix of `mask` by the semi-naive layer sweep.
    ///
    /// Complexity: `O(L* · ones(M) + Σ spans + |R|)`; memory `2n²` bytes plus three bit matrices.
    ///
    /// # Examples
    /// ```
    /// use hasseflow_core::{BitMatrix, FirstReach};
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn down_sets_up_sets_and_comparable_pairs() {
        // prefix-LM n=5 p=2: classes {0,1} {2} {3} {4}, a chain.
        let m = BitMatrix::from_fn(5, |q, k| k <= q || k < 2);
        let a = Analysis::new(&m);
        let c = a.class_of()[3];
        assert_eq!(a.down_set(c), [0, 1, 2, 3]);
        assert_eq!(a.seen_by(c), 2);
        assert_eq!(a.seen_by(a.class_of()[0]), 5);
        let (pairs, cut) = a.comparable_pairs(100);
        assert_eq!((pairs.len(), cut), (6, false));
        assert!(pairs.iter().all(|&(lo, up)| a.class_le(lo, up) && lo != up));
        assert_eq!(a.comparable_pairs(6), (pairs.clone(), false));
        assert_eq!(a.comparable_pairs(5), (pairs[..5].to_vec(), true));
    }

    #[test]
    fn cycle_needs_n_minus_one_layers() {
        let n = 9;
        let cycle = BitMatrix::from_fn(n, |q, k| k == (q + n - 1) % n);
        let a = Analysis::new(&cycle);
        assert_eq!(a.depth(), n - 1);
        assert_eq!(a.classes().len(), 1);
        assert_eq!(a.width(), 1);
        assert_eq!(FirstReach::new(&cycle).depth(), n - 1);
    }

    #[test]
    fn width_and_height() {
        let causal = BitMatrix::from_fn(50, |q, k| k <= q);
        let a = Analysis::new(&causal);
        assert_eq!((a.height(), a.width()), (50, 1));
        let empty = BitMatrix::zeros(7);
        let a = Analysis::new(&empty);
        assert_eq!((a.height(), a.width()), (1, 7));
        // Two chains of length 3 side by side.
        let two = BitMatrix::from_fn(6, |q, k| q / 3 == k / 3 && k <= q);
        let a = Analysis::new(&two);
        assert_eq!((a.height(), a.width()), (3, 2));
    }

    #[test]
    fn empty_matrix() {
        let a = Analysis::new(&BitMatrix::zeros(0));
        assert_eq!(a.depth(), 0);
        assert!(a.classes().is_empty());
        assert_eq!(a.width(), 0);
    }
}
