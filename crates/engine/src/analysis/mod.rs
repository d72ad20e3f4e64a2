//! The analysis of one mask repeated in every layer: its order ([`crate::order::Order`]: limit
//! closure, equivalence classes, Hasse diagram, height and width), the convergence depth `L*` and
//! the per-layer growth (THEORY §1-4).
//!
//! # Algorithm
//! The order: [`crate::order`] (steps 1-4).
//! 5. `L*` and the growth curve: when every row of `Ā` is at most
//!    [`crate::reach::DEFAULT_MAX_ROW_INTERVALS`] intervals, by the structured reach engine
//!    ([`crate::reach::repeated_growth`], `O(L* · n)` for windows); when rows are at most
//!    32 scattered keys on average (random, sparse BigBird-like masks), by a bit-parallel frontier
//!    BFS of 1024 keys at a time, 512 in wasm (`frontier.rs`: push or pull, whichever touches
//!    fewer edges, a position leaving a batch once it holds its limit); otherwise by a
//!    semi-naive ("delta") layer sweep: a row only ORs the cells that were *new* in the previous
//!    layer, each over its non-zero word span, and a row leaves the sweep
//!    once it holds its limit. Dense masks are answered without a sweep (`L* ≤ 1`).

use std::cell::OnceCell;
use std::ops::Deref;

use crate::bits::BitMatrix;
use crate::order::Order;

mod frontier;
mod sweep;
#[cfg(test)]
mod tests;

pub use crate::order::position_runs;
pub(crate) use sweep::layer_sweep;
pub use sweep::{FirstReach, reach_after};

/// Everything the order theory says about a mask used in every layer.
///
/// # Examples
/// ```
/// use hasseflow_engine::{Analysis, BitMatrix};
/// // prefix-LM, n = 5, prefix 2 (THEORY §8)
/// let mask = BitMatrix::from_fn(5, |q, k| k <= q || k < 2);
/// let a = Analysis::new(&mask);
/// assert_eq!(a.depth(), 1);
/// assert!(a.is_dense());
/// assert_eq!(a.classes(), &[vec![0, 1], vec![2], vec![3], vec![4]]);
/// assert_eq!(a.hasse_edges(), &[(0, 1), (1, 2), (2, 3)]);
/// ```
#[derive(Clone, Debug)]
///
/// Its order's methods ([`Order`]: `closure`, `classes`, `hasse_edges`, `width`, ...) are
/// reached through `Deref`.
pub struct Analysis {
    order: Order,
    /// `(L*, growth)`, computed on first use.
    layers: OnceCell<(usize, Vec<usize>)>,
}

impl Deref for Analysis {
    type Target = Order;

    fn deref(&self) -> &Order {
        &self.order
    }
}

impl Analysis {
    /// Analyses `mask`: its [`Order`] now, `L*` and the growth curve on first use
    /// ([`Analysis::depth`], [`Analysis::growth`]): free for dense masks, the structured engine
    /// for rows of few intervals, a frontier BFS for sparse rows (module docs), else a layer sweep of
    /// `O(L* · ones(M) + Σ spans)` word operations, where a span is the word range of a row's new
    /// cells in one layer (about `w/64 + 2` words for a window `w`).
    pub fn new(mask: &BitMatrix) -> Analysis {
        Analysis { order: Order::new(mask), layers: OnceCell::new() }
    }

    /// `L*` and the growth curve, computed on first use: the order (closure, classes, Hasse) does
    /// not need them, and for sparse masks the sweep costs more than the order.
    fn layers(&self) -> &(usize, Vec<usize>) {
        self.layers.get_or_init(|| {
            let n = self.order.n();
            // The order's graph of a sparse mask: its edges say what the mask's ones would.
            let graph = self.order.sparse_graph();
            let within_diagonal = match graph {
                Some(graph) => graph.reads.list.is_empty(),
                None => self.order.adj().count_ones() == n,
            };
            if within_diagonal {
                (0, vec![n])
            } else if self.order.is_dense() {
                (1, vec![n, self.order.limit_cells()])
            } else {
                // The order's graph, or (a mask that did not look sparse to the order) built here.
                let built;
                let sparse = match graph {
                    Some(graph) => Some(graph),
                    None => {
                        built = crate::sparse::Graph::sparse(self.order.adj());
                        built.as_ref()
                    }
                };
                // Scattered sparse rows fragment the structured engine's rows at once: not tried.
                let structured = if sparse.is_some_and(|g| g.scattered) {
                    None
                } else {
                    crate::reach::repeated_growth(
                        self.order.adj(),
                        self.order.limit_cells(),
                        crate::reach::DEFAULT_MAX_ROW_INTERVALS,
                    )
                };
                if let Some(growth) = structured {
                    // Rows of few intervals: the structured engine, O(L* · n · intervals).
                    (growth.len() - 1, growth)
                } else if let Some(graph) = sparse {
                    // Few keys per row: the frontier BFS, a batch of keys at a time, a position
                    // leaving a batch once it holds its limit; natively the batches share the cores.
                    let (depth, added) = frontier::frontier_growth(graph, Some(&frontier::Limit::new(&self.order)));
                    (depth, sweep::running_sums(&added))
                } else {
                    let adj = self.order.adj();
                    let ones: Vec<usize> = (0..self.order.classes().len())
                        .map(|c| self.order.class_row(c).iter().map(|w| w.count_ones() as usize).sum())
                        .collect();
                    let targets: Vec<usize> = self.order.class_of().iter().map(|&c| ones[c]).collect();
                    // The sweep counts each layer's new cells itself: no per-word callback.
                    let (depth, added) = layer_sweep(adj, Some(&targets), |_, _, _, _, _| {});
                    (depth, sweep::running_sums(&added))
                }
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
        assert_eq!(growth.last().copied(), Some(self.limit_cells()), "first-reach matrix of another mask");
        let _ = self.layers.set((first_reach.depth(), growth));
        self
    }

    /// Convergence depth `L* = min{L : R(L) = R(L+1)}`.
    ///
    /// Computed on first call by the layer sweep (see [`Analysis::new`] for its cost) and cached.
    pub fn depth(&self) -> usize {
        self.layers().0
    }

    /// `|R(L)|`, the number of reached cells, for `L = 0..=L*`.
    pub fn growth(&self) -> &[usize] {
        &self.layers().1
    }
}
