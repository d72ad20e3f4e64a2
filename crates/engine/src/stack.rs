//! Layer stacks: a different mask per layer, several heads per layer (THEORY §2, extension).
//!
//! `R(L) = Ā_L ··· Ā_1` with `Ā_l = (OR of the heads of layer l) ∨ I`. Still monotone in `L`, but
//! the limit depends on the order of the layers.

use crate::bits::BitMatrix;

/// One layer: the masks of its heads, which act together as their OR.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layer {
    /// Head masks; all of the same size, at least one.
    pub heads: Vec<BitMatrix>,
}

impl Layer {
    /// A layer with a single head.
    pub fn single(mask: BitMatrix) -> Layer {
        Layer { heads: vec![mask] }
    }

    /// The layer's adjacency `(OR of heads) ∨ I`.
    pub fn adjacency(&self) -> BitMatrix {
        let mut it = self.heads.iter();
        let first = it.next().expect("a layer has at least one head (checked by LayerStack::new)");
        it.fold(first.clone(), |acc, h| acc.or(h)).with_diagonal()
    }
}

/// How a stack of `K` layers is run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum StackMode {
    /// Exactly the `K` layers, once: the limit is `R(K)`.
    #[default]
    Once,
    /// The `K` layers repeated periodically (layer `l` uses mask `(l-1) mod K`) until a whole
    /// period changes nothing; the limit is the fixed point.
    Repeat,
}

/// A non-empty list of layers of equal size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerStack {
    layers: Vec<Layer>,
}

/// Why a list of layers is not a stack.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StackError {
    /// No layers at all.
    #[error("a layer stack needs at least one layer")]
    Empty,
    /// A layer without heads.
    #[error("layer {layer} has no heads")]
    NoHeads {
        /// 0-based layer index.
        layer: usize,
    },
    /// A head of a different size than the first.
    #[error("layer {layer} head {head} is {found}x{found}, expected {expected}x{expected}")]
    SizeMismatch {
        /// 0-based layer index.
        layer: usize,
        /// 0-based head index.
        head: usize,
        /// Size of the first head of layer 0.
        expected: usize,
        /// Size found.
        found: usize,
    },
}

/// Result of running a stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StackAnalysis {
    /// The limit (`R(K)` for [`StackMode::Once`], the fixed point for [`StackMode::Repeat`]).
    pub limit: BitMatrix,
    /// `min{L : R(L) = limit}`.
    pub depth: usize,
    /// `|R(L)|` for `L = 0..=depth`.
    pub growth: Vec<usize>,
}

impl LayerStack {
    /// Checks that `layers` is non-empty, every layer has a head, and all heads share one size.
    pub fn new(layers: Vec<Layer>) -> Result<LayerStack, StackError> {
        let expected = layers.first().ok_or(StackError::Empty)?.heads.first().map(BitMatrix::n);
        let expected = expected.ok_or(StackError::NoHeads { layer: 0 })?;
        for (l, layer) in layers.iter().enumerate() {
            if layer.heads.is_empty() {
                return Err(StackError::NoHeads { layer: l });
            }
            for (h, head) in layer.heads.iter().enumerate() {
                if head.n() != expected {
                    return Err(StackError::SizeMismatch { layer: l, head: h, expected, found: head.n() });
                }
            }
        }
        Ok(LayerStack { layers })
    }

    /// The layers.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// Side length of every mask.
    pub fn n(&self) -> usize {
        self.layers[0].heads[0].n()
    }

    /// Runs the stack.
    ///
    /// Complexity: per layer one boolean product, `O(ones(Ā_l) · n/64)`; `K` layers for
    /// [`StackMode::Once`], at most `depth + K` for [`StackMode::Repeat`].
    ///
    /// # Examples
    /// ```
    /// use hasseflow_engine::{BitMatrix, Layer, LayerStack, StackMode};
    /// let causal = BitMatrix::from_fn(4, |q, k| k <= q);
    /// let anti = causal.transpose();
    /// let stack = LayerStack::new(vec![Layer::single(causal), Layer::single(anti)]).unwrap();
    /// let once = stack.analyze(StackMode::Once);
    /// assert_eq!(once.limit.count_ones(), 16); // causal then anti-causal: everyone sees everyone
    /// assert_eq!(once.depth, 2);
    /// ```
    pub fn analyze(&self, mode: StackMode) -> StackAnalysis {
        let n = self.n();
        let adjs: Vec<BitMatrix> = self.layers.iter().map(Layer::adjacency).collect();
        let k = adjs.len();
        let mut reach = BitMatrix::identity(n);
        // R(L) grows monotonically, so R(L) = limit exactly when their counts agree.
        let mut counts = vec![n];
        let mut unchanged = 0;
        let mut l = 0;
        loop {
            if mode == StackMode::Once && l == k {
                break;
            }
            let next = adjs[l % k].bool_product(&reach);
            l += 1;
            if next == reach {
                unchanged += 1;
            } else {
                unchanged = 0;
            }
            reach = next;
            counts.push(reach.count_ones());
            if mode == StackMode::Repeat && unchanged >= k {
                break;
            }
        }
        let total = reach.count_ones();
        let depth = counts.iter().position(|&c| c == total).unwrap_or(0);
        counts.truncate(depth + 1);
        let growth = counts;
        StackAnalysis { limit: reach, depth, growth }
    }
}
