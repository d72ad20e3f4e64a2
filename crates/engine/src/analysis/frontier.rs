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
//!
//! Natively on x86-64 a batch runs in the widest build the CPU has ([`Kernel`]: AVX-512, AVX2 or
//! x86-64-v2, chosen at run time), and the working memory of a search is kept for the next one
//! (`Work::take`, `Work::give_back`).

use crate::bits::WORD_BITS;
use crate::order::Order;
use crate::sparse::Graph;

/// What a position can ever see: its class's row of the closure (a random mask's one big class
/// is one row, not thousands). A position leaves a batch once it sees every key of its limit in
/// the batch.
pub(crate) struct Limit<'a> {
    class_of: &'a [usize],
    /// Each class's row.
    rows: Vec<&'a [u64]>,
}

impl<'a> Limit<'a> {
    /// The limit of a mask with this order.
    pub(crate) fn new(order: &'a Order) -> Self {
        Limit { class_of: order.class_of(), rows: (0..order.classes().len()).map(|c| order.class_row(c)).collect() }
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
    /// Push at every third layer, else pull: pushes after two pulls, pulls after a push.
    #[cfg(test)]
    Mixed,
}

/// Which build of a batch's search runs. Natively on x86-64 the widest the CPU has: AVX-512 with
/// its vector bit count (a block's 16 words in two instructions, where x86-64-v2 takes eight),
/// else AVX2, else the baseline. The tests run each the CPU has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    Widest,
    #[cfg(test)]
    Avx2,
    #[cfg(test)]
    Baseline,
}

/// What every batch of one search shares.
#[derive(Clone, Copy)]
struct Search<'a> {
    graph: &'a Graph,
    /// Each row's run of keys in each batch ([`batch_runs`]; natively).
    #[cfg(not(target_arch = "wasm32"))]
    runs: &'a [u32],
    limit: Option<&'a Limit<'a>>,
    direction: Direction,
    /// Only x86-64 has builds to choose from.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    kernel: Kernel,
}

/// The layers the batches found: the deepest, and the cells each added.
struct Tally {
    depth: usize,
    added: Vec<usize>,
}

impl Tally {
    /// Counts the `cells` a batch added at `layer` (none: no count, `depth` unchanged).
    fn record(&mut self, layer: usize, cells: usize) {
        if cells > 0 {
            self.depth = self.depth.max(layer);
            if self.added.len() <= layer {
                self.added.resize(layer + 1, 0);
            }
            self.added[layer] += cells;
        }
    }
}

/// What a search tells of the cells it finds: each thread of a search reports to its own.
pub(crate) trait Found {
    /// Position `q` gains at `layer` the keys of `bits`, words of the batch from `word0` (bit `s`
    /// of `bits[i]` = key `64·(word0 + i) + s`; zero words where nothing is new). Called once per
    /// position, layer and batch; each cell once, the diagonal never.
    fn new_keys(&mut self, layer: usize, q: usize, word0: usize, bits: &[u64]);
    /// The batch of keys from word `first_word` is searched.
    fn batch_done(&mut self, first_word: usize);
}

/// Nothing asked but the counts (what [`super::Analysis`] needs).
impl Found for () {
    fn new_keys(&mut self, _: usize, _: usize, _: usize, _: &[u64]) {}
    fn batch_done(&mut self, _: usize) {}
}

/// The cores a search may use: the machine's natively, one in wasm (no threads there).
pub(crate) fn cores() -> usize {
    #[cfg(not(target_arch = "wasm32"))]
    return std::thread::available_parallelism().map_or(1, usize::from);
    #[cfg(target_arch = "wasm32")]
    1
}

/// `L*` and the cells each layer added, as [`frontier_batches`] gives them with no cells asked for
/// (what [`super::Analysis`] needs), the batches shared among the machine's [`cores`].
pub(crate) fn frontier_growth(graph: &Graph, limit: Option<&Limit>) -> (usize, Vec<usize>) {
    frontier_growth_on(graph, limit, cores(), Kernel::Widest)
}

/// [`frontier_growth`] on at most `threads` threads.
pub(crate) fn frontier_growth_on(
    graph: &Graph,
    limit: Option<&Limit>,
    threads: usize,
    kernel: Kernel,
) -> (usize, Vec<usize>) {
    // Natively, batches of 1024 keys while there are as many as threads, else of 512 (at
    // n = 1024 on 2 cores, one batch of 1024 would leave a core idle).
    #[cfg(not(target_arch = "wasm32"))]
    if graph.n.div_ceil(BATCH_WORDS * WORD_BITS) < threads {
        return frontier_batches::<8, ()>(graph, limit, Direction::Cheaper, kernel, threads, &|| ());
    }
    frontier_batches::<BATCH_WORDS, ()>(graph, limit, Direction::Cheaper, kernel, threads, &|| ())
}

/// The layer sweep's answer by frontier BFS over `graph` (of a mask with its diagonal), in batches
/// of `64 · W` keys shared among at most `threads` threads (batch `b` on thread `b mod threads`:
/// the costly middle batches spread evenly; in wasm one after another): reports every cell found
/// to its thread's [`Found`] (made by `found` on that thread), and returns `L*` and the cells each
/// layer added (`added[0] = n`), as [`super::layer_sweep`] does (each batch is a search of its
/// own; their counts add up).
///
/// `limit`, when given, is the mask's: a position leaves a batch once it sees every key
/// of the batch it will ever see (without it, once it sees every key whose search is still
/// running). Each layer moves the frontier by `direction`.
///
/// Complexity: per batch and layer, the smaller of the frontier's out-edges and the in-edges of
/// the positions still short (times `PULL_RATIO` for pushing), each edge `W` words; at worst
/// `O(n/64 · edges)` words per layer, the sweep's word count but in cache-resident arrays of `n`
/// blocks (`8 · W` bytes each) instead of `n x n` bit matrices, and far less once the frontier is
/// thin or the rows are full. Memory: three such arrays a thread, the edges, where each row's
/// keys of each batch start, and a block per class.
pub(crate) fn frontier_batches<const W: usize, F: Found>(
    graph: &Graph,
    limit: Option<&Limit>,
    direction: Direction,
    kernel: Kernel,
    threads: usize,
    found: &(impl Fn() -> F + Sync),
) -> (usize, Vec<usize>) {
    let n = graph.n;
    let batches = n.div_ceil(W * WORD_BITS);
    // No threads in wasm: there the batches run one after another.
    let threads = if cfg!(target_arch = "wasm32") { 1 } else { threads.clamp(1, batches.max(1)) };
    #[cfg(not(target_arch = "wasm32"))]
    let runs = &batch_runs(graph, W * WORD_BITS);
    // Thread `t`'s batches, in one working memory.
    let run = |t: usize| {
        let mut work = Work::<W>::take(n);
        let mut tally = Tally { depth: 0, added: vec![0] };
        let mut found = found();
        let search = Search {
            graph,
            #[cfg(not(target_arch = "wasm32"))]
            runs,
            limit,
            direction,
            kernel,
        };
        for batch in (t..batches).step_by(threads) {
            search_batch(search, batch, &mut work, &mut tally, &mut |layer, q, word0, bits| {
                found.new_keys(layer, q, word0, bits)
            });
            found.batch_done(batch * W);
        }
        work.give_back();
        tally
    };
    if threads == 1 {
        let Tally { depth, mut added } = run(0);
        added[0] = n;
        return (depth, added);
    }
    #[cfg(target_arch = "wasm32")]
    unreachable!("one thread in wasm");
    #[cfg(not(target_arch = "wasm32"))]
    {
        let parts = std::thread::scope(|s| {
            let handles: Vec<_> = (1..threads).map(|t| s.spawn(move || run(t))).collect();
            let mut parts = vec![run(0)];
            parts.extend(handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))));
            parts
        });
        // The threads' counts added up, layer by layer.
        let mut total = Tally { depth: 0, added: vec![n] };
        for part in parts {
            for (layer, &cells) in part.added.iter().enumerate().skip(1) {
                total.record(layer, cells);
            }
        }
        (total.depth, total.added)
    }
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
    /// Whether `next` may hold blocks of an earlier batch (one that pulled: a pull writes every
    /// row, and a batch is not followed by a pass to clear them). A batch's first pull overwrites
    /// them all; a push before it clears them first (it adds into `next`). `front` needs no such
    /// care: layer 1 writes every row's.
    next_stale: bool,
}

/// Working memory kept between searches (natively), each with its size in bytes: a new
/// allocation of that size is fresh pages, whose faults cost more than the search (0.4-1.2 ms
/// per thread at n = 4096, where a batch's search takes 0.7 ms). At most [`SPARE_BYTES`] are kept.
#[cfg(not(target_arch = "wasm32"))]
static SPARE: std::sync::Mutex<Vec<(usize, Box<dyn std::any::Any + Send>)>> = std::sync::Mutex::new(Vec::new());

/// The most working memory kept between searches: that of 2 threads at n = 16384 (12 MiB).
#[cfg(not(target_arch = "wasm32"))]
const SPARE_BYTES: usize = 2 * 3 * 16384 * 8 * BATCH_WORDS;

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
            next_stale: false,
        }
    }

    /// Working memory for `n` positions: a spare one when there is one (natively).
    fn take(n: usize) -> Self {
        #[cfg(not(target_arch = "wasm32"))]
        {
            let spare = SPARE.lock().ok().and_then(|mut spare| {
                let i = spare.iter().position(|(_, w)| w.is::<Work<W>>())?;
                Some(spare.swap_remove(i).1)
            });
            if let Some(mut work) = spare.and_then(|w| w.downcast::<Work<W>>().ok()) {
                // Its blocks are zero or stale (`Work::next_stale`); it may be for more or fewer
                // positions. Cut or grown to `n`, so that a pull, which writes every row, leaves
                // no stale row behind (the capacity is kept: growing back costs no page faults).
                for blocks in [&mut work.visited, &mut work.front, &mut work.next] {
                    blocks.resize(n, Block::ZERO);
                }
                return *work;
            }
        }
        Work::new(n)
    }

    /// Keeps this working memory for the next search, if the spares hold less than
    /// [`SPARE_BYTES`] with it (natively; in wasm it is dropped: there freed memory is reused
    /// without faults).
    fn give_back(self) {
        debug_assert!(self.next_stale || self.next.iter().all(is_zero), "a search that only pushed leaves `next` zero");
        #[cfg(not(target_arch = "wasm32"))]
        if let Ok(mut spare) = SPARE.lock() {
            let bytes = 3 * self.front.len() * std::mem::size_of::<Block<W>>();
            if spare.iter().map(|(b, _)| b).sum::<usize>() + bytes <= SPARE_BYTES {
                spare.push((bytes, Box::new(self)));
            }
        }
    }
}

/// [`run_batch`] by its kernel's build.
fn search_batch<const W: usize>(
    search: Search,
    batch: usize,
    work: &mut Work<W>,
    tally: &mut Tally,
    on_new: &mut impl FnMut(usize, usize, usize, &[u64]),
) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        let avx512 = has!("avx512f") && has!("avx512vl") && has!("avx512bw") && has!("avx512vpopcntdq");
        let avx2 = has!("avx2") && has!("popcnt");
        #[allow(unsafe_code)]
        match search.kernel {
            // SAFETY: the one requirement of calling a function built for target features is
            // that the CPU has them, and this one has (checked just above).
            Kernel::Widest if avx512 => return unsafe { run_batch_avx512(search, batch, work, tally, on_new) },
            #[cfg(test)]
            Kernel::Avx2 if avx2 => return unsafe { run_batch_avx2(search, batch, work, tally, on_new) },
            // SAFETY: as above.
            Kernel::Widest if avx2 => return unsafe { run_batch_avx2(search, batch, work, tally, on_new) },
            _ => {}
        }
    }
    run_batch::<W, false>(search, batch, work, tally, on_new)
}

/// `$name`: [`run_batch`] built for the target features `$features` (the same code: `run_batch`
/// is inlined in each build), its gathers loading copies of the blocks or not (`$copies`: see
/// [`gather`]).
macro_rules! run_batch_built_for {
    ($name:ident, $features:literal, $copies:literal) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $features)]
        fn $name<const W: usize>(
            search: Search,
            batch: usize,
            work: &mut Work<W>,
            tally: &mut Tally,
            on_new: &mut impl FnMut(usize, usize, usize, &[u64]),
        ) {
            run_batch::<W, $copies>(search, batch, work, tally, on_new)
        }
    };
}
run_batch_built_for!(run_batch_avx512, "avx512f,avx512vl,avx512bw,avx512vpopcntdq,popcnt", false);
run_batch_built_for!(run_batch_avx2, "avx2,popcnt", true);

/// Searches batch `batch` (keys from `64 · W · batch`): records each layer's new cells in
/// `tally`, reports them to `on_new`. Always inlined, so that each build ([`search_batch`])
/// compiles it for its own instructions.
#[cfg_attr(target_arch = "x86_64", inline(always))]
fn run_batch<const W: usize, const COPIES: bool>(
    search: Search,
    batch: usize,
    work: &mut Work<W>,
    tally: &mut Tally,
    on_new: &mut impl FnMut(usize, usize, usize, &[u64]),
) {
    let Search { graph, limit, direction, .. } = search;
    let n = graph.n;
    let reads = &graph.reads;
    let batch_keys = W * WORD_BITS;
    let Work { visited, front, next, targets, front_list, next_list, active, next_stale } = work;
    let base = batch * batch_keys;
    let word0 = batch * W;
    let words = W.min(n.div_ceil(WORD_BITS) - word0);
    let end = n.min(base + batch_keys);
    targets.clear();
    match limit {
        Some(l) => targets.extend(l.rows.iter().map(|row| {
            let mut t = Block::<W>::ZERO;
            t[..words].copy_from_slice(&row[word0..word0 + words]);
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
    // Layer 1 read off the rows in one pass, where a push or pull from the batch's own keys ran:
    // each position gains the keys of the batch it reads (its reads are sorted, so they are one
    // run of its list). It sees them and its own key; they are the next layer's frontier.
    front_list.clear();
    let mut cells = 0;
    #[cfg(not(target_arch = "wasm32"))]
    let stride = n.div_ceil(batch_keys) + 1;
    for q in 0..n {
        // Natively the run's keys alone, found in `runs` (each key of the list tested cost a
        // third more: 4 batches at 4096, 0.10 -> 0.07 ms a batch); in wasm every key, tested
        // without a branch (a search for the run, and a loop over it, were mispredicted at most
        // rows; the runs cost the first download 0.6 KB). Both blocks are written whole, whatever
        // the batch before left in them (no pass to clear them after a batch).
        #[cfg(not(target_arch = "wasm32"))]
        let keys = &reads.of(q)[search.runs[q * stride + batch] as usize..search.runs[q * stride + batch + 1] as usize];
        #[cfg(target_arch = "wasm32")]
        let keys = reads.of(q);
        let mut b = Block::<W>::ZERO;
        let mut gained = 0;
        for &k in keys {
            let at = (k as usize).wrapping_sub(base);
            let inside = at < batch_keys;
            let at = at % batch_keys;
            b[at / WORD_BITS] |= u64::from(inside) << (at % WORD_BITS);
            gained += usize::from(inside);
        }
        let (seen, new) = (&mut visited[q], &mut front[q]);
        *new = b;
        *seen = b;
        if (base..end).contains(&q) {
            let at = q - base;
            seen[at / WORD_BITS] |= 1 << (at % WORD_BITS);
        }
        if gained != 0 {
            cells += gained;
            on_new(1, q, word0, &new[..words]);
            front_list.push(q as u32);
        }
    }
    tally.record(1, cells);
    let mut active_built = false;
    let mut active_edges = reads.list.len();
    let mut layer = 1;
    while !front_list.is_empty() {
        layer += 1;
        let push = match direction {
            // Pull scans rows once and writes each row once: it wins well before the
            // frontier's out-edges reach the rows' in-edges.
            Direction::Cheaper => {
                // Summed until it passes the pull's cost: a dense frontier's list is not read to
                // its end (9% off a random mask's search at 4096).
                let mut push_cost = 0;
                front_list.iter().all(|&j| {
                    push_cost += graph.readers_count(j as usize) * PULL_RATIO;
                    push_cost < active_edges
                })
            }
            #[cfg(test)]
            Direction::Push => true,
            #[cfg(test)]
            Direction::Pull => false,
            #[cfg(test)]
            Direction::Mixed => layer % 3 == 0,
        };
        let mut per_word = [0u64; W];
        if push {
            // A push adds into `next`, which holds the frontier of two layers back: non-zero at
            // `next_list`'s rows, and maybe at rows that left the active list (see below), which
            // gain nothing: they are not listed, whatever their blocks hold. Blocks of an earlier
            // batch are cleared first.
            if std::mem::take(next_stale) {
                next.fill(Block::ZERO);
            }
            for &q in next_list.iter() {
                next[q as usize] = Block::ZERO;
            }
            next_list.clear();
            let readers = graph.readers();
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
                    per_word[w] += u64::from(fresh.count_ones());
                }
                if any != 0 {
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
                // This pull writes every row's block of `next`.
                *next_stale = false;
            }
            // A pull writes the block of every active row, gain or none. A row that leaves the
            // list gains nothing more (its frontier is empty) but keeps its last blocks, which a
            // push may add to: every key they hold it saw by the layer before (held then, or
            // added from the rows it reads), so a reader that takes one from them reaches it by
            // this layer too. The layers found are those of exact frontiers.
            let pulled = Pull { reads, targets, class_of, alive: &alive, layer, word0, words };
            (active_edges, per_word) = pulled.run::<COPIES>(active, visited, front, next, next_list, on_new);
        }
        std::mem::swap(front, next);
        std::mem::swap(front_list, next_list);
        tally.record(layer, per_word.iter().sum::<u64>() as usize);
    }
    // After a pull, the blocks are left as they are (the next batch writes or clears them before
    // it reads them: see `Work::next_stale`); else the last frontier is empty and the one before
    // it is non-zero at `next_list` alone, cleared here.
    if active_built {
        *next_stale = true;
    } else {
        for &q in next_list.iter() {
            next[q as usize] = Block::ZERO;
        }
    }
    next_list.clear();
}

/// Where each row's keys of each batch start in its list, for the batches' first layer: row
/// `q`'s keys of batch `b` are `reads.of(q)[runs[q·(B+1) + b]..runs[q·(B+1) + b + 1]]`, for `B`
/// batches of `batch_keys`. Built once a search, by counting: `O(n · B + edges)`, `4 · (B + 1)`
/// bytes a position (20 at n = 4096, where the blocks take 384). Native builds only.
#[cfg(not(target_arch = "wasm32"))]
fn batch_runs(graph: &Graph, batch_keys: usize) -> Vec<u32> {
    let n = graph.n;
    let stride = n.div_ceil(batch_keys) + 1;
    let mut runs = vec![0u32; n * stride];
    for q in 0..n {
        let at = &mut runs[q * stride..(q + 1) * stride];
        for &k in graph.reads.of(q) {
            at[k as usize / batch_keys + 1] += 1;
        }
        for b in 1..stride {
            at[b] += at[b - 1];
        }
    }
    runs
}

/// What one pull layer reads besides the blocks: each row moves by the frontier blocks of the
/// rows it reads, within what it still misses.
struct Pull<'a, const W: usize> {
    reads: &'a crate::sparse::Csr,
    targets: &'a [Block<W>],
    class_of: Option<&'a [usize]>,
    alive: &'a Block<W>,
    layer: usize,
    word0: usize,
    words: usize,
}

impl<const W: usize> Pull<'_, W> {
    /// Pulls every active row: writes its gain to `next` (zero included) and adds it to
    /// `visited`; lists the rows that gained in `next_list` and keeps in `active` the rows still
    /// short. Returns the in-edges of the rows kept and the cells gained in each word of the
    /// batch. Branch-free but for the row's reads (rows gain, stay or leave at random).
    #[inline(always)]
    fn run<const COPIES: bool>(
        &self,
        active: &mut Vec<u32>,
        visited: &mut [Block<W>],
        front: &[Block<W>],
        next: &mut [Block<W>],
        next_list: &mut Vec<u32>,
        on_new: &mut impl FnMut(usize, usize, usize, &[u64]),
    ) -> (usize, [u64; W]) {
        let rows = active.len();
        next_list.clear();
        next_list.resize(rows, 0);
        let (mut kept, mut gained) = (0, 0);
        let mut edges = 0;
        let mut counts = [0u64; W];
        let alive = *self.alive;
        // At most a block's words: the slice below needs no check.
        let words = self.words.min(W);
        for i in 0..rows {
            let q = active[i] as usize;
            let target = &self.targets[self.class_of.map_or(0, |c| c[q])];
            let seen = &mut visited[q];
            let mut missing = Block::<W>::ZERO;
            for w in 0..W {
                missing[w] = target[w] & alive[w] & !seen[w];
            }
            let row = self.reads.of(q);
            let mut got = gather::<W, COPIES>(front, row);
            let mut short = Block::<W>::ZERO;
            for w in 0..W {
                got[w] &= missing[w];
                short[w] = missing[w] & !got[w];
                seen[w] |= got[w];
                counts[w] += u64::from(got[w].count_ones());
            }
            next[q] = got;
            let (any, short) = (!is_zero(&got), !is_zero(&short));
            if any {
                on_new(self.layer, q, self.word0, &got[..words]);
            }
            next_list[gained] = q as u32;
            gained += usize::from(any);
            active[kept] = q as u32;
            kept += usize::from(short);
            edges += if short { row.len() } else { 0 };
        }
        next_list.truncate(gained);
        active.truncate(kept);
        (edges, counts)
    }
}

/// The union of the blocks of `rows`, natively four at a time (an OR tree: fewer instructions,
/// shorter chains; a fifth off the gather alone at 4096). Every block is read: a check per block
/// to stop early made each load wait for the last, and stopping once a row's reads cover what it
/// misses was slower too (docs/BENCHMARKS.md, stop 46). With `COPIES`, through copies of the
/// blocks: the AVX2 build then loads them whole (through references it split each load in two
/// halves, 15% slower at n = 4096), where the AVX-512 build loads references whole and splits
/// copies at odd offsets (7% slower).
#[inline(always)]
fn gather<const W: usize, const COPIES: bool>(blocks: &[Block<W>], rows: &[u32]) -> Block<W> {
    let mut got = Block::<W>::ZERO;
    // In wasm one at a time: a smaller first download.
    #[cfg(not(target_arch = "wasm32"))]
    let rows = {
        let mut fours = rows.chunks_exact(4);
        for four in fours.by_ref() {
            if COPIES {
                let [a, b, c, d] = [0, 1, 2, 3].map(|i| blocks[four[i] as usize]);
                for w in 0..W {
                    got[w] |= (a[w] | b[w]) | (c[w] | d[w]);
                }
            } else {
                let [a, b, c, d] = [0, 1, 2, 3].map(|i| &blocks[four[i] as usize]);
                for w in 0..W {
                    got[w] |= (a[w] | b[w]) | (c[w] | d[w]);
                }
            }
        }
        fours.remainder()
    };
    for &j in rows {
        let f = blocks[j as usize];
        for w in 0..W {
            got[w] |= f[w];
        }
    }
    got
}
