//! Bit-parallel frontier BFS over a sparse adjacency: `L*`, the growth curve and the first-reach
//! layers of masks with few, scattered keys per row (random and BigBird-like sparse masks), where
//! the layer sweep pays `n/64` words per key and layer however few cells are new.
//!
//! A batch of sources (keys `k`) at a time, [`BATCH_WORDS`] `u64` per position (1024 keys natively,
//! 512 in wasm): bit `s` of `visited[q]` is whether `q` sees key `base + s` yet. Each position's
//! block of a batch is aligned to its own cache lines. Each layer moves the frontier (the bits
//! first set in the previous layer) along the reads edges in one of two directions (Beamer's
//! direction-optimising BFS): *push* from the frontier's positions to the positions that read them
//! while the frontier is thin, else *pull* into the positions still short of their limit from the
//! positions they read. A position leaves a batch once it sees every key of its limit whose search
//! still runs. The layer at which a bit is first set is its BFS depth, i.e. the first-reach layer
//! `D[q][k]`, so one pass gives growth, `L*` and, when asked, every cell's layer.

use crate::bits::{BitMatrix, WORD_BITS};
use crate::sparse::Graph;

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

/// Words of keys per position in one batch: `64 · BATCH_WORDS` keys are searched at once. Natively
/// 1024 (two cache lines a block: a position's work is shared by twice the keys, and the three
/// arrays of blocks, 1.5 MB at n = 4096, stay within a core's L2); in wasm 512, as before (a
/// smaller program for the first download).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) const BATCH_WORDS: usize = 16;
#[cfg(target_arch = "wasm32")]
pub(crate) const BATCH_WORDS: usize = 8;

/// A position's words of one batch, on a cache line of its own: a large `Vec` starts 16 bytes
/// into a page (the allocator's header), so unaligned blocks would each span two lines.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Block<const W: usize>([u64; W]);

impl<const W: usize> Block<W> {
    const ZERO: Self = Block([0; W]);
}

impl<const W: usize> std::ops::Deref for Block<W> {
    type Target = [u64; W];
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<const W: usize> std::ops::DerefMut for Block<W> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

/// The frontier pushes while its out-edges are under `1 / PULL_RATIO` of the in-edges of the
/// rows still short; past that, rows pull.
const PULL_RATIO: usize = 8;

/// Set bits in a block, summed as a whole (vectorised: baseline x86-64 has no `popcnt`).
#[inline]
fn count<const W: usize>(b: &Block<W>) -> usize {
    b.iter().map(|w| w.count_ones() as usize).sum()
}

#[inline]
fn is_zero<const W: usize>(b: &Block<W>) -> bool {
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
/// at worst `O(n/64 · edges)` words per layer, the sweep's word count but in cache-resident
/// arrays of `n` blocks (`8 · BATCH_WORDS` bytes each) instead of `n x n` bit matrices, and far
/// less once the frontier is thin or the rows are full. Memory: three such arrays and the
/// edges, and a block per class.
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
    let mut work = Work::<BATCH_WORDS>::new(n);
    let mut added = vec![n];
    let mut depth = 0;
    for batch in 0..n.div_ceil(BATCH_WORDS * WORD_BITS) {
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
    // Natively, batches of 1024 keys while there are as many as threads, else of 512 (at
    // n = 1024 on 2 cores, one batch of 1024 would leave a core idle).
    #[cfg(not(target_arch = "wasm32"))]
    if graph.n.div_ceil(BATCH_WORDS * WORD_BITS) < threads {
        return growth_in_batches_of::<8>(graph, limit, threads);
    }
    growth_in_batches_of::<BATCH_WORDS>(graph, limit, threads)
}

/// [`frontier_growth_on`] in batches of `64 · W` keys.
fn growth_in_batches_of<const W: usize>(graph: &Graph, limit: Option<&Limit>, threads: usize) -> (usize, Vec<usize>) {
    let n = graph.n;
    let batches = n.div_ceil(W * WORD_BITS);
    let threads = threads.clamp(1, batches.max(1));
    let share = |t: usize| {
        let (mut work, mut depth, mut added) = (Work::<W>::new(n), 0, vec![0]);
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

/// One search's working memory, reused batch after batch.
struct Work<const W: usize> {
    visited: Vec<Block<W>>,
    front: Vec<Block<W>>,
    next: Vec<Block<W>>,
    /// What each class can gain in this batch: its limit's keys (one block for all without a
    /// limit).
    targets: Vec<Block<W>>,
    front_list: Vec<u32>,
    next_list: Vec<u32>,
    /// Positions short of their target in this batch; built on the first pull.
    active: Vec<u32>,
}

impl<const W: usize> Work<W> {
    fn new(n: usize) -> Self {
        Work {
            visited: vec![Block::ZERO; n],
            front: vec![Block::ZERO; n],
            next: vec![Block::ZERO; n],
            targets: Vec::new(),
            front_list: Vec::new(),
            next_list: Vec::new(),
            active: Vec::new(),
        }
    }
}

/// Searches batch `batch` (keys from `64 · W · batch`): raises `depth` to its last
/// layer, adds each layer's new cells to `added`, reports them to `on_new`.
#[allow(clippy::too_many_arguments)]
fn run_batch<const W: usize>(
    graph: &Graph,
    limit: Option<&Limit>,
    direction: Direction,
    batch: usize,
    work: &mut Work<W>,
    depth: &mut usize,
    added: &mut Vec<usize>,
    on_new: &mut impl FnMut(usize, usize, usize, &[u64]),
) {
    let n = graph.n;
    let (reads, readers) = (&graph.reads, &graph.readers);
    let batch_keys = W * WORD_BITS;
    let Work { visited, front, next, targets, front_list, next_list, active } = work;
    let base = batch * batch_keys;
    let word0 = batch * W;
    let words = W.min(n.div_ceil(WORD_BITS) - word0);
    let end = n.min(base + batch_keys);
    targets.clear();
    match limit {
        Some(l) => targets.extend(l.members.iter().map(|&q| {
            let mut t = Block::<W>::ZERO;
            t[..words].copy_from_slice(&l.closure.row(q)[word0..word0 + words]);
            t
        })),
        None => {
            let mut all = Block::<W>::ZERO;
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
        let mut new = Block::<W>::ZERO;
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
                    for (s, w) in slot.iter_mut().zip(f.iter()) {
                        *s |= w;
                    }
                }
            }
            let mut kept = 0;
            for i in 0..next_list.len() {
                let q = next_list[i] as usize;
                let mut any = 0;
                for w in 0..W {
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
            // Keys whose search still runs: a position can gain no other. With a limit, a key
            // of a position's limit that it does not see yet is one of them (its search reaches
            // the position later, so its frontier is not empty): no pass over the frontier.
            let mut alive = Block([u64::MAX; W]);
            if limit.is_none() {
                alive = Block::<W>::ZERO;
                for &j in front_list.iter() {
                    for (a, w) in alive.iter_mut().zip(front[j as usize].iter()) {
                        *a |= w;
                    }
                }
            }
            if !active_built {
                active.clear();
                active.extend((0..n).map(|q| q as u32));
                active_built = true;
            }
            active_edges = 0;
            let mut kept = 0;
            // Slices, not the vectors: their pointers stay in registers across the stores.
            let (seen_all, front_all, next_all) = (&mut visited[..], &front[..], &mut next[..]);
            for i in 0..active.len() {
                let q = active[i] as usize;
                let target = &targets[class_of.map_or(0, |c| c[q])];
                let seen = &mut seen_all[q];
                let mut missing = Block::<W>::ZERO;
                let mut short = 0;
                for w in 0..W {
                    missing[w] = target[w] & alive[w] & !seen[w];
                    short |= missing[w];
                }
                if short == 0 {
                    continue;
                }
                // Branch-free: the loads of a row's keys overlap (a check per key to stop
                // early made each wait for the last, and rarely stopped: a row short of a
                // key after layer 3 or so usually stays short of it this layer too).
                let row = reads.of(q);
                let mut got = Block::<W>::ZERO;
                for &j in row {
                    let f = &front_all[j as usize];
                    for w in 0..W {
                        got[w] |= f[w];
                    }
                }
                let (mut any, mut left) = (0, 0);
                for w in 0..W {
                    got[w] &= missing[w];
                    any |= got[w];
                    left |= missing[w] & !got[w];
                    seen[w] |= got[w];
                }
                if any != 0 {
                    cells += count(&got);
                    on_new(layer, q, word0, &got[..words]);
                    next_all[q] = got;
                    next_list.push(q as u32);
                }
                if left != 0 {
                    active[kept] = q as u32;
                    kept += 1;
                    active_edges += row.len();
                }
            }
            active.truncate(kept);
        }
        for &j in front_list.iter() {
            front[j as usize] = Block::<W>::ZERO;
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
