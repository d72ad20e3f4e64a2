//! The limit's classes, components and compressed Hasse diagram, without `n²` work where the
//! limit's rows are single intervals with non-decreasing ends.
//!
//! With a transitive limit whose rows are intervals `C[q] = [lo_q, hi_q] ∋ q`: `k ∈ C[q]` implies
//! `C[k] ⊆ C[q]`, so `[k] ≤ [q]` iff `C[k] ⊆ C[q]` and classes are the groups of equal intervals.
//! When both ends are non-decreasing in `q`, equal intervals are contiguous runs of positions and
//! the distinct intervals `I_1, …, I_m` are sorted by both ends; the intervals strictly inside
//! `I_i` are those after it with the same `hi` and those before it with the same `lo`, nested in
//! both directions, so the lower covers of class `i` are exactly `i-1` (if `lo_{i-1} = lo_i`) and
//! `i+1` (if `hi_{i+1} = hi_i`). The diagram is read in one pass.
//!
//! Other limits are analysed densely ([`crate::Order`]) up to [`DENSE_MAX`] positions.

use super::rows::Rows;
use super::{CompressedHasse, DENSE_MAX, HasseEdge, HasseNode, HasseNodeKind, LimitStructure};
use crate::order::{Order, position_runs};

/// A covering edge between classes `i` and `i + 1`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    /// `i` is covered by `i + 1`.
    Up,
    /// `i + 1` is covered by `i`.
    Down,
}

pub(crate) fn analyse(limit: &Rows, cap: usize) -> LimitStructure {
    let n = limit.n();
    let components = components(limit);
    match limit {
        Rows::Single { lo, hi, mono: true } => {
            // Classes: runs of equal intervals (counted first: up to n of them, allocated once).
            let new_class = |q: usize| q == 0 || lo[q] != lo[q - 1] || hi[q] != hi[q - 1];
            let mut starts: Vec<u32> = Vec::with_capacity((0..n).filter(|&q| new_class(q)).count());
            starts.extend((0..n).filter(|&q| new_class(q)).map(|q| q as u32));
            let m = starts.len();
            let end = |i: usize| if i + 1 < m { starts[i + 1] as u64 - 1 } else { n as u64 - 1 };
            let single = |i: usize| (end(i) == starts[i] as u64).then_some(starts[i] as u64);
            let link = |i: usize| {
                let (a, b) = (starts[i] as usize, starts[i + 1] as usize);
                if lo[a] == lo[b] {
                    Some(Dir::Up)
                } else if hi[a] == hi[b] {
                    Some(Dir::Down)
                } else {
                    None
                }
            };
            let runs = |i: usize| vec![[starts[i] as u64, end(i)]];
            let hasse = compress(m, single, link, runs, |i| starts[i] as u64, std::iter::empty(), cap);
            LimitStructure {
                classes: Some(m as u64),
                components,
                hasse: Some(hasse),
                method: "monotone-intervals".to_string(),
            }
        }
        _ if n <= DENSE_MAX => {
            let a = Order::new(&limit.to_interval_rows().to_bitmatrix());
            LimitStructure {
                classes: Some(a.classes().len() as u64),
                components,
                hasse: Some(compress_order(a.classes(), a.hasse_edges(), cap)),
                method: "dense".to_string(),
            }
        }
        _ => LimitStructure {
            classes: None,
            components,
            hasse: None,
            method: format!(
                "not computed: the limit's rows are not single intervals with non-decreasing ends, and n = {n} is \
                 above the dense limit {DENSE_MAX}"
            ),
        },
    }
}

/// The compressed Hasse diagram of an order given by its classes (each a sorted list of positions,
/// the classes ordered by smallest member, as [`Order::classes`] gives them) and its covering
/// edges `(lower, upper)`: chains of singleton classes at consecutive positions become one node,
/// at most `cap` nodes are listed. What the structured report's `limit.hasse` holds, for any
/// dense order (the Python package's and the app's compressed pictures).
///
/// Complexity: `O(classes + edges · log edges)`.
///
/// # Examples
/// ```
/// use hasseflow_engine::{BitMatrix, Order};
/// use hasseflow_engine::reach::compress_order;
/// // Two causal blocks of 3 side by side: two chains, no edge between them.
/// let o = Order::new(&BitMatrix::from_fn(6, |q, k| k <= q && q / 3 == k / 3));
/// let h = compress_order(o.classes(), o.hasse_edges(), 100);
/// assert_eq!((h.node_count, h.edge_count), (2, 0));
/// assert_eq!(h.nodes[1].label, "3–5");
/// ```
pub fn compress_order(classes: &[Vec<usize>], edges: &[(usize, usize)], cap: usize) -> CompressedHasse {
    let mut sorted = edges.to_vec();
    sorted.sort_unstable();
    let has = |e: (usize, usize)| sorted.binary_search(&e).is_ok();
    let single = |i: usize| (classes[i].len() == 1).then(|| classes[i][0] as u64);
    let link = |i: usize| {
        if has((i, i + 1)) {
            Some(Dir::Up)
        } else if has((i + 1, i)) {
            Some(Dir::Down)
        } else {
            None
        }
    };
    let runs = |i: usize| position_runs(&classes[i]).iter().map(|&(a, b)| [a as u64, b as u64]).collect();
    let others = sorted.iter().copied().filter(|&(x, y)| x.abs_diff(y) != 1);
    compress(classes.len(), single, link, runs, |i| classes[i][0] as u64, others, cap)
}

/// Collapses chains: a node is a maximal run of singleton classes at consecutive positions joined
/// by covering edges all in one direction, or one class of several positions. `link(i)` is the
/// covering edge between classes `i` and `i+1` (classes ordered by smallest member), `others` the
/// covering edges `(lower, upper)` between classes that are not neighbours in that order.
fn compress(
    m: usize,
    single: impl Fn(usize) -> Option<u64>,
    link: impl Fn(usize) -> Option<Dir>,
    runs: impl Fn(usize) -> Vec<[u64; 2]>,
    rep: impl Fn(usize) -> u64,
    others: impl Iterator<Item = (usize, usize)>,
    cap: usize,
) -> CompressedHasse {
    // Which node each class is in: needed only for the covering edges between classes that are
    // not neighbours (the dense path); otherwise the edges are read at the nodes' boundaries.
    let mut others = others.peekable();
    let mut node_of = if others.peek().is_some() { vec![0u32; m] } else { Vec::new() };
    let mut node_first: Vec<u32> = Vec::new();
    let mut nodes = Vec::new();
    let mut count = 0u64;
    let mut i = 0;
    while i < m {
        let id = count;
        count += 1;
        node_first.push(i as u32);
        let Some(p) = single(i) else {
            if let Some(slot) = node_of.get_mut(i) {
                *slot = id as u32;
            }
            if (id as usize) < cap {
                let r = runs(i);
                let label = r.iter().map(|&[a, b]| run_label(a, b)).collect::<Vec<_>>().join(",");
                let (first, last) = (r[0][0], r[r.len() - 1][1]);
                let size = r.iter().map(|&[a, b]| b - a + 1).sum();
                nodes.push(HasseNode { id, kind: HasseNodeKind::Class, first, last, size, runs: r, label });
            }
            i += 1;
            continue;
        };
        let mut j = i;
        let mut dir = None;
        while j + 1 < m {
            let Some(pn) = single(j + 1) else { break };
            if pn != p + (j + 1 - i) as u64 {
                break;
            }
            match link(j) {
                Some(d) if dir.is_none() || dir == Some(d) => dir = Some(d),
                _ => break,
            }
            j += 1;
        }
        for c in node_of.iter_mut().take(j + 1).skip(i) {
            *c = id as u32;
        }
        // Classes i..=j are one node: only the last one's link can leave it.
        if (id as usize) < cap {
            let top = p + (j - i) as u64;
            let (first, last) = if dir == Some(Dir::Down) { (top, p) } else { (p, top) };
            nodes.push(HasseNode {
                id,
                kind: HasseNodeKind::Chain,
                first,
                last,
                size: (j - i + 1) as u64,
                runs: vec![[p, top]],
                label: run_label(first, last),
            });
        }
        i = j + 1;
    }
    let mut edges = Vec::new();
    let mut edge_count = 0u64;
    let node_of_class = |c: usize| match node_of.get(c) {
        Some(&id) => id as u64,
        None => (node_first.partition_point(|&f| f as usize <= c) - 1) as u64,
    };
    let mut push = |lower: usize, upper: usize| {
        let (a, b) = (node_of_class(lower), node_of_class(upper));
        if a == b {
            return;
        }
        edge_count += 1;
        if (a as usize) < cap && (b as usize) < cap {
            edges.push(HasseEdge { lower: a, upper: b, lower_position: rep(lower), upper_position: rep(upper) });
        }
    };
    // Neighbouring classes in different nodes: the last class of each node and the next.
    for &f in node_first.iter().skip(1) {
        let c = f as usize - 1;
        match link(c) {
            Some(Dir::Up) => push(c, c + 1),
            Some(Dir::Down) => push(c + 1, c),
            None => {}
        }
    }
    for (x, y) in others {
        push(x, y);
    }
    edges.sort_unstable_by_key(|e| (e.lower, e.upper));
    CompressedHasse { node_count: count, edge_count, truncated: count as usize > cap, nodes, edges }
}

fn run_label(a: u64, b: u64) -> String {
    if a == b { a.to_string() } else { format!("{a}–{b}") }
}

/// Weakly connected components of the limit (positions joined by any cell).
fn components(limit: &Rows) -> u64 {
    let n = limit.n();
    if n == 0 {
        return 0;
    }
    if let Rows::Single { lo, hi, mono: true } = limit {
        // Every row is one interval containing its query, so only neighbours are ever joined
        // directly: `i` and `i + 1` are when some row's interval holds both, and with
        // non-decreasing ends the rows that could are `i` (the largest `hi` at or before `i`)
        // and `i + 1` (the smallest `lo` after `i`). One pass, nothing allocated.
        let joined = (0..n - 1).filter(|&i| hi[i] as usize > i || lo[i + 1] as usize <= i).count();
        return (n - joined) as u64;
    }
    // link[i]: positions i and i+1 lie in one interval of some row (so both join its query).
    let mut diff = vec![0i32; n + 1];
    let mut far: Vec<(u32, u32)> = Vec::new();
    let mut row = Vec::new();
    for q in 0..n {
        row.clear();
        limit.row_into(q, &mut row);
        for s in &row {
            if s[0] < s[1] {
                diff[s[0] as usize] += 1;
                diff[s[1] as usize] -= 1;
            }
            if !(s[0] as usize <= q && q <= s[1] as usize) {
                far.push((q as u32, s[0]));
            }
        }
    }
    let mut parent: Vec<u32> = (0..n as u32).collect();
    fn find(p: &mut [u32], mut x: u32) -> u32 {
        while p[x as usize] != x {
            p[x as usize] = p[p[x as usize] as usize];
            x = p[x as usize];
        }
        x
    }
    let mut count = n as u64;
    let mut union = |p: &mut Vec<u32>, a: u32, b: u32| {
        let (ra, rb) = (find(p, a), find(p, b));
        if ra != rb {
            p[ra.max(rb) as usize] = ra.min(rb);
            count -= 1;
        }
    };
    let mut acc = 0i32;
    for (i, d) in diff.iter().enumerate().take(n - 1) {
        acc += d;
        if acc > 0 {
            union(&mut parent, i as u32, i as u32 + 1);
        }
    }
    for (a, b) in far {
        union(&mut parent, a, b);
    }
    count
}
