//! Mask operations that preserve or reshape the order: densify, sparsify (THEORY §4).

use crate::analysis::Analysis;
use crate::bits::BitMatrix;

/// How a class (a bidirectional block) is wired inside a sparsified mask.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ClassWiring {
    /// Every member reads every member (the theory's sparsification, (R)).
    #[default]
    Clique,
    /// Members in ascending order form a directed cycle: member `i` reads member `i-1` (and the
    /// first reads the last). Fewer entries, more layers.
    Cycle,
}

/// How a covering pair `[k] ⋖ [q]` is wired inside a sparsified mask.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CoverWiring {
    /// Every member of `[q]` reads every member of `[k]` (the theory's sparsification).
    #[default]
    AllPairs,
    /// Only the smallest member of `[q]` reads the smallest member of `[k]`; the rest flows
    /// through the class wiring, so more layers are needed.
    OneEdge,
}

/// Options of [`sparsify`]. The default is the theory's `S`: cliques plus all covering pairs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SparsifyOptions {
    /// Wiring inside each class.
    pub classes: ClassWiring,
    /// Wiring of each Hasse edge.
    pub covers: CoverWiring,
}

/// Densify: the limit closure `R`, which needs one layer (`L* ≤ 1`) and has the same Hasse diagram.
///
/// Complexity: that of [`Analysis::new`].
pub fn densify(mask: &BitMatrix) -> BitMatrix {
    Analysis::new(mask).closure().clone()
}

/// Sparsify: a mask with the same limit and Hasse diagram but (usually) fewer entries, keeping
/// for each class only its own wiring and its covering pairs (THEORY §4, (R)).
///
/// The diagonal is set (the residual connection is there anyway).
///
/// # Examples
/// ```
/// use hasseflow_engine::{Analysis, BitMatrix, sparsify, SparsifyOptions};
/// let causal = BitMatrix::from_fn(5, |q, k| k <= q);
/// let s = sparsify(&causal, SparsifyOptions::default());
/// assert_eq!(s, BitMatrix::from_fn(5, |q, k| q == k || q == k + 1));
/// assert_eq!(Analysis::new(&s).depth(), 4);
/// ```
pub fn sparsify(mask: &BitMatrix, options: SparsifyOptions) -> BitMatrix {
    let a = Analysis::new(mask);
    sparsify_analysis(&a, options)
}

/// [`sparsify`] for a mask already analysed.
pub fn sparsify_analysis(a: &Analysis, options: SparsifyOptions) -> BitMatrix {
    let mut s = BitMatrix::identity(a.n());
    for members in a.classes() {
        match options.classes {
            ClassWiring::Clique => {
                for &q in members {
                    for &k in members {
                        s.set(q, k, true);
                    }
                }
            }
            ClassWiring::Cycle => {
                for (i, &q) in members.iter().enumerate() {
                    let prev = members[(i + members.len() - 1) % members.len()];
                    s.set(q, prev, true);
                }
            }
        }
    }
    for &(lower, upper) in a.hasse_edges() {
        let (lo, up) = (&a.classes()[lower], &a.classes()[upper]);
        match options.covers {
            CoverWiring::AllPairs => {
                for &q in up {
                    for &k in lo {
                        s.set(q, k, true);
                    }
                }
            }
            CoverWiring::OneEdge => s.set(up[0], lo[0], true),
        }
    }
    s
}
