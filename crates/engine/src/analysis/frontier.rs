//! Bit-parallel frontier BFS over a sparse adjacency: `L*`, the growth curve and the first-reach
//! layers of masks with few, scattered keys per row (random and BigBird-like sparse masks), where
//! the layer sweep pays `n/64` words per key and layer however few cells are new.
//!
//! 512 sources (keys `k`) at a time, eight `u64` per position: bit `s` of `visited[q]` is
//! whether `q` sees key `base + s` yet. Each layer moves the frontier (the bits first set in the
//! previous layer) along the reads edges in one of two directions (Beamer's direction-optimising
//! BFS): *push* from the frontier's positions to the positions that read them while the frontier
//! is thin, else *pull* into the positions still short of their limit from the positions they
//! read. A position leaves a batch once it sees every key of its limit whose search still runs.
//! The layer at which a bit is first set is its BFS depth, i.e. the first-reach layer `D[q][k]`,
//! so one pass gives growth, `L*` and, when asked, every cell's layer.

use crate::bits::{BitMatrix, WORD_BITS};

/// Keys per row (diagonal excluded), on average, up to which the frontier BFS is used.
pub(crate) const SPARSE_KEYS_PER_ROW: usize = 32;

/// Compressed rows, diagonal dropped: row `v`'s positions are `list[start[v]..start[v + 1]]`.
struct Csr {
    start: Vec<u32>,
    list: Vec<u32>,
}

impl Csr {
    #[inline]
    fn of(&self, v: usize) -> &[u32] {
        &self.list[self.start[v] as usize..self.start[v + 1] as usize]
    }
}

/// The reads graph in both directions, diagonal dropped: `reads[q]` are the keys `q` reads,
/// `readers[k]` the positions that read `k`; built in one pass over the rows of the mask.
pub(crate) struct Graph {
    n: usize,
    reads: Csr,
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

    /// The number of positions.
    pub(crate) fn n(&self) -> usize {
        self.n
    }

    fn bounded(adj: &BitMatrix, bound: usize) -> Option<Graph> {
        let n = adj.n();
        let mut start = Vec::with_capacity(n + 1);
        let mut list: Vec<u32> = Vec::with_capacity(bound.min(9 * n));
        let mut count = vec![0u32; n + 1];
        let (mut ones, mut starts) = (0usize, 0usize);
        start.push(0);
        for q in 0..n {
            let from = list.len();
            // Branch-free in the common case: each word's lowest one is written whether or not
            // there is one, and kept if there is (a sparse row's words are zero or hold one key,
            // at random: a branch per word would be mispredicted at every key).
            for (w, &word) in adj.row(q).iter().enumerate() {
                let at = list.len();
                list.push((w * WORD_BITS) as u32 + word.trailing_zeros());
                list.truncate(at + usize::from(word != 0));
                let mut rest = word & word.wrapping_sub(1);
                while rest != 0 {
                    list.push((w * WORD_BITS) as u32 + rest.trailing_zeros());
                    rest &= rest - 1;
                }
            }
            ones += list.len() - from;
            if ones > bound {
                return None;
            }
            // The row's keys, ascending: count the intervals, drop the diagonal.
            let mut next = u32::MAX;
            let mut kept = from;
            for i in from..list.len() {
                let k = list[i];
                starts += usize::from(k != next);
                next = k + 1;
                list[kept] = k;
                kept += usize::from(k as usize != q);
                count[k as usize + 1] += 1;
            }
            if kept < list.len() {
                count[q + 1] -= 1;
            }
            list.truncate(kept);
            start.push(list.len() as u32);
        }
        for k in 0..n {
            count[k + 1] += count[k];
        }
        let reads = Csr { start, list };
        let mut readers = Csr { start: count.clone(), list: vec![0; reads.list.len()] };
        for q in 0..n {
            for &k in reads.of(q) {
                let at = &mut count[k as usize];
                readers.list[*at as usize] = q as u32;
                *at += 1;
            }
        }
        Some(Graph { n, reads, readers, scattered: starts > 4 * n })
    }
}

/// What a position can ever see: its row of the closure, which it shares with its class (a
/// random mask's one big class is one row, not thousands). A position leaves a batch once it
/// sees every key of its limit in the batch.
pub(crate) struct Limit<'a> {
    closure: &'a BitMatrix,
    class_of: &'a [usize],
    /// A position of each class, whose closure row stands for the class's.
    members: Vec<usize>,
}

impl<'a> Limit<'a> {
    /// The limit of a mask with this `closure` and these classes (`class_of[q]`, from `0`).
    pub(crate) fn new(closure: &'a BitMatrix, class_of: &'a [usize]) -> Self {
        let mut members = vec![usize::MAX; class_of.iter().max().map_or(0, |&c| c + 1)];
        for (q, &c) in class_of.iter().enumerate().rev() {
            members[c] = q;
        }
        Limit { closure, class_of, members }
    }
}

/// Words of keys per position in one batch: `64 · BATCH_WORDS` keys are searched at once.
pub(crate) const BATCH_WORDS: usize = 8;

type Block = [u64; BATCH_WORDS];

/// The frontier pushes while its out-edges are under `1 / PULL_RATIO` of the in-edges of the
/// rows still short; past that, rows pull.
const PULL_RATIO: usize = 8;

/// Set bits in a block, summed as a whole (vectorised: baseline x86-64 has no `popcnt`).
#[inline]
fn count(b: &Block) -> usize {
    b.iter().map(|w| w.count_ones() as usize).sum()
}

#[inline]
fn is_zero(b: &Block) -> bool {
    b.iter().fold(0, |acc, &w| acc | w) == 0
}

/// How each layer moves the frontier: the cheaper direction (what [`frontier_growth`] and the
/// first-reach matrix use), or always one (the tests run both against the sweep).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    Cheaper,
    #[cfg(test)]
    Push,
    #[cfg(test)]
    Pull,
}

/// The layer sweep's answer by frontier BFS over `graph` (of a mask with its diagonal): calls
/// `on_new(layer, q, word, bits)` for each position `q` that gains keys at `layer`, once per
/// batch, with the batch's words of keys from `64·word` on (bit `s` of `bits[i]` = key
/// `64·(word + i) + s`; zero words where nothing is new; each cell once, the diagonal never), and
/// returns `L*` and the cells each layer added (`added[0] = n`), as [`super::layer_sweep`] does.
///
/// `limit`, when given, is the mask's: a position leaves a batch once it sees every key
/// of the batch it will ever see (without it, once it sees every key whose search is still
/// running).
///
/// Complexity: per batch and layer, the smaller of the frontier's out-edges and the in-edges of
/// the positions still short (times `PULL_RATIO` for pushing), each edge `BATCH_WORDS` words;
/// at worst `O(n/512 · edges · 8)` words per layer, the sweep's word count but in
/// cache-resident `O(n · 64 B)` arrays instead of `n x n` bit matrices, and far less once the
/// frontier is thin or the rows are full. Memory: `O(n · 192 B + edges)`, and a block per class.
///
/// Each layer moves the frontier by `direction`; `on_batch_done(first_word)` is called after each
/// batch of `BATCH_WORDS` words of keys (from `first_word`).
pub(crate) fn frontier_layers_by(
    graph: &Graph,
    limit: Option<&Limit>,
    direction: Direction,
    mut on_new: impl FnMut(usize, usize, usize, &[u64]),
    mut on_batch_done: impl FnMut(usize),
) -> (usize, Vec<usize>) {
    let n = graph.n;
    let mut work = Work::new(n);
    let mut added = vec![n];
    let mut depth = 0;
    for batch in 0..n.div_ceil(BATCH_KEYS) {
        run_batch(graph, limit, direction, batch, &mut work, &mut depth, &mut added, &mut on_new);
        on_batch_done(batch * BATCH_WORDS);
    }
    (depth, added)
}

/// `L*` and the cells each layer added, as [`frontier_layers_by`] gives them with no cells asked for
/// (what [`super::Analysis`] needs): natively the batches are shared among the machine's cores
/// (each batch is a search of its own; their counts add up), in wasm they run one after another.
pub(crate) fn frontier_growth(graph: &Graph, limit: Option<&Limit>) -> (usize, Vec<usize>) {
    #[cfg(not(target_arch = "wasm32"))]
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    #[cfg(target_arch = "wasm32")]
    let threads = 1;
    frontier_growth_on(graph, limit, threads)
}

/// [`frontier_growth`] on at most `threads` threads (batch `b` on thread `b mod threads`: the
/// costly middle batches spread evenly).
pub(crate) fn frontier_growth_on(graph: &Graph, limit: Option<&Limit>, threads: usize) -> (usize, Vec<usize>) {
    let n = graph.n;
    let batches = n.div_ceil(BATCH_KEYS);
    let threads = threads.clamp(1, batches.max(1));
    let share = |t: usize| {
        let (mut work, mut depth, mut added) = (Work::new(n), 0, vec![0]);
        for batch in (t..batches).step_by(threads) {
            run_batch(graph, limit, Direction::Cheaper, batch, &mut work, &mut depth, &mut added, &mut |_, _, _, _| {});
        }
        (depth, added)
    };
    let parts: Vec<(usize, Vec<usize>)> = if threads == 1 {
        vec![share(0)]
    } else {
        // No threads in wasm: there `frontier_growth` asks for one.
        #[cfg(target_arch = "wasm32")]
        let parts = (0..threads).map(share).collect();
        #[cfg(not(target_arch = "wasm32"))]
        let parts = std::thread::scope(|s| {
            let handles: Vec<_> = (1..threads).map(|t| s.spawn(move || share(t))).collect();
            let mut parts = vec![share(0)];
            parts.extend(handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))));
            parts
        });
        parts
    };
    let mut added = vec![n];
    let mut depth = 0;
    for (d, a) in parts {
        depth = depth.max(d);
        if added.len() < a.len() {
            added.resize(a.len(), 0);
        }
        for (t, x) in added.iter_mut().zip(&a).skip(1) {
            *t += x;
        }
    }
    (depth, added)
}

/// Keys searched at once: `64 · BATCH_WORDS`.
const BATCH_KEYS: usize = WORD_BITS * BATCH_WORDS;

/// One search's working memory, reused batch after batch.
struct Work {
    visited: Vec<Block>,
    front: Vec<Block>,
    next: Vec<Block>,
    /// What each class can gain in this batch: its limit's keys (one block for all without a
    /// limit).
    targets: Vec<Block>,
    front_list: Vec<u32>,
    next_list: Vec<u32>,
    /// Positions short of their target in this batch; built on the first pull.
    active: Vec<u32>,
}

impl Work {
    fn new(n: usize) -> Self {
        const ZERO: Block = [0; BATCH_WORDS];
        Work {
            visited: vec![ZERO; n],
            front: vec![ZERO; n],
            next: vec![ZERO; n],
            targets: Vec::new(),
            front_list: Vec::new(),
            next_list: Vec::new(),
            active: Vec::new(),
        }
    }
}

/// Searches batch `batch` (keys from `64 · BATCH_WORDS · batch`): raises `depth` to its last
/// layer, adds each layer's new cells to `added`, reports them to `on_new`.
#[allow(clippy::too_many_arguments)]
fn run_batch(
    graph: &Graph,
    limit: Option<&Limit>,
    direction: Direction,
    batch: usize,
    work: &mut Work,
    depth: &mut usize,
    added: &mut Vec<usize>,
    on_new: &mut impl FnMut(usize, usize, usize, &[u64]),
) {
    const ZERO: Block = [0; BATCH_WORDS];
    let n = graph.n;
    let (reads, readers) = (&graph.reads, &graph.readers);
    let batch_keys = BATCH_KEYS;
    let Work { visited, front, next, targets, front_list, next_list, active } = work;
    let base = batch * batch_keys;
    let word0 = batch * BATCH_WORDS;
    let words = BATCH_WORDS.min(n.div_ceil(WORD_BITS) - word0);
    let end = n.min(base + batch_keys);
    targets.clear();
    match limit {
        Some(l) => targets.extend(l.members.iter().map(|&q| {
            let mut t = ZERO;
            t[..words].copy_from_slice(&l.closure.row(q)[word0..word0 + words]);
            t
        })),
        None => {
            let mut all = ZERO;
            for k in base..end {
                all[(k - base) / WORD_BITS] |= 1 << (k % WORD_BITS);
            }
            targets.push(all);
        }
    }
    let class_of = limit.map(|l| l.class_of);
    let bit = |k: usize| ((k - base) / WORD_BITS, 1u64 << (k % WORD_BITS));
    // Layer 1 read off the rows in one pass, where a push or pull from the batch's own keys ran:
    // each position gains the keys of the batch it reads (its reads are sorted, so they are one
    // run of its list). It sees them and its own key; they are the next layer's frontier.
    front_list.clear();
    let mut cells = 0;
    for q in 0..n {
        let keys = reads.of(q);
        let mut new = ZERO;
        for &k in keys[keys.partition_point(|&k| (k as usize) < base)..].iter().take_while(|&&k| (k as usize) < end) {
            let (w, b) = bit(k as usize);
            new[w] |= b;
        }
        visited[q] = new;
        if (base..end).contains(&q) {
            let (w, b) = bit(q);
            visited[q][w] |= b;
        }
        if !is_zero(&new) {
            cells += count(&new);
            on_new(1, q, word0, &new[..words]);
            front[q] = new;
            front_list.push(q as u32);
        }
    }
    record(depth, added, 1, cells);
    let mut active_built = false;
    let mut active_edges = reads.list.len();
    let mut layer = 1;
    while !front_list.is_empty() {
        layer += 1;
        let mut cells = 0usize;
        let push_cost: usize = front_list.iter().map(|&j| readers.of(j as usize).len()).sum();
        let push = match direction {
            // Pull scans rows once, writes each row once and stops a row's scan early:
            // it wins well before the frontier's out-edges reach the rows' in-edges.
            Direction::Cheaper => push_cost * PULL_RATIO < active_edges,
            #[cfg(test)]
            Direction::Push => true,
            #[cfg(test)]
            Direction::Pull => false,
        };
        if push {
            for &j in front_list.iter() {
                let f = front[j as usize];
                for &q in readers.of(j as usize) {
                    let slot = &mut next[q as usize];
                    if is_zero(slot) {
                        next_list.push(q);
                    }
                    for (s, w) in slot.iter_mut().zip(&f) {
                        *s |= w;
                    }
                }
            }
            let mut kept = 0;
            for i in 0..next_list.len() {
                let q = next_list[i] as usize;
                let mut any = 0;
                for w in 0..BATCH_WORDS {
                    let fresh = next[q][w] & !visited[q][w];
                    next[q][w] = fresh;
                    visited[q][w] |= fresh;
                    any |= fresh;
                }
                if any != 0 {
                    cells += count(&next[q]);
                    on_new(layer, q, word0, &next[q][..words]);
                    next_list[kept] = q as u32;
                    kept += 1;
                }
            }
            next_list.truncate(kept);
        } else {
            // Keys whose search still runs: a position can gain no other.
            let mut alive = ZERO;
            for &j in front_list.iter() {
                for (a, w) in alive.iter_mut().zip(&front[j as usize]) {
                    *a |= w;
                }
            }
            if !active_built {
                active.clear();
                active.extend((0..n).map(|q| q as u32));
                active_built = true;
            }
            active_edges = 0;
            let mut kept = 0;
            for i in 0..active.len() {
                let q = active[i] as usize;
                let target = &targets[class_of.map_or(0, |c| c[q])];
                let mut missing = ZERO;
                let mut short = 0;
                for w in 0..BATCH_WORDS {
                    missing[w] = target[w] & alive[w] & !visited[q][w];
                    short |= missing[w];
                }
                if short == 0 {
                    continue;
                }
                // Branch-free: the loads of a row's keys overlap (a check per key to stop
                // early made each wait for the last, and rarely stopped: a row short of a
                // key after layer 3 or so usually stays short of it this layer too).
                let mut got = ZERO;
                for &j in reads.of(q) {
                    for (g, w) in got.iter_mut().zip(&front[j as usize]) {
                        *g |= w;
                    }
                }
                for (g, m) in got.iter_mut().zip(&missing) {
                    *g &= m;
                }
                let mut left = short;
                if !is_zero(&got) {
                    cells += count(&got);
                    left = 0;
                    for w in 0..BATCH_WORDS {
                        visited[q][w] |= got[w];
                        left |= missing[w] & !got[w];
                    }
                    on_new(layer, q, word0, &got[..words]);
                    next[q] = got;
                    next_list.push(q as u32);
                }
                if left != 0 {
                    active[kept] = q as u32;
                    kept += 1;
                    active_edges += reads.of(q).len();
                }
            }
            active.truncate(kept);
        }
        for &j in front_list.iter() {
            front[j as usize] = ZERO;
        }
        std::mem::swap(front, next);
        std::mem::swap(front_list, next_list);
        next_list.clear();
        record(depth, added, layer, cells);
    }
}

/// Counts the `cells` a batch added at `layer` (none: no count, `depth` unchanged).
fn record(depth: &mut usize, added: &mut Vec<usize>, layer: usize, cells: usize) {
    if cells > 0 {
        *depth = (*depth).max(layer);
        if added.len() <= layer {
            added.resize(layer + 1, 0);
        }
        added[layer] += cells;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// The one-pass graph against the definitions it replaced, on random masks from empty to
    /// past the sparsity bound (rows of one key a word, of several, and dense runs): both
    /// directions hold every key but the diagonal, ascending; the scattering is the count of
    /// interval starts (diagonal included) against `4 n`; the bound refuses exactly the masks
    /// with more than `33 n` ones.
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
                assert_eq!(g.readers.of(q), &readers[..], "case {case}: readers of {q}");
                starts += (0..n).filter(|&k| m.get(q, k) && (k == 0 || !m.get(q, k - 1))).count();
            }
            assert_eq!(g.scattered, starts > 4 * n, "case {case}: scattered");
            scattered += usize::from(g.scattered);
            compact += usize::from(!g.scattered && n > 0);
        }
        assert!(
            refused > 20 && scattered > 20 && compact > 20,
            "{refused} refused, {scattered} scattered, {compact} compact"
        );
    }
}
