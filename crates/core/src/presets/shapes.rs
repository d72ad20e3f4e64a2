//! The structured presets whose positions are not one per token: Block Two-Stream, Butterfly, XLNet.

use serde::{Deserialize, Serialize};

use super::*;

/// Attention inside a block. Serialised as the preset parameter's words (`"full"`, `"causal"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Inner {
    /// Every token of the block reads every other.
    #[default]
    Full,
    /// A token reads the tokens of its block up to itself.
    Causal,
}

impl Inner {
    /// The parameter's word: `full` or `causal`.
    pub fn word(self) -> &'static str {
        match self {
            Inner::Full => "full",
            Inner::Causal => "causal",
        }
    }

    /// `causal` is [`Inner::Causal`]; any other word [`Inner::Full`] (the word is checked by its
    /// parameter's choices first).
    pub fn from_word(word: &str) -> Inner {
        if word == "causal" { Inner::Causal } else { Inner::Full }
    }
}

/// Position order of a two-stream layout. Serialised as the preset parameter's words
/// (`"grouped"`, `"interleaved"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TwoStreamOrder {
    /// `[prompt | w_0..w_{n-1} | m_0..m_{n-1}]`.
    #[default]
    Grouped,
    /// `[prompt | K_0 Q_0 K_1 Q_1 ...]`, block by block.
    Interleaved,
}

/// What a position of a two-stream layout holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TwoStreamSlot {
    /// Clean prompt token `i`.
    Prompt(usize),
    /// Clean (content-stream) token `w_t`.
    Content(usize),
    /// Mask (query-stream) token `m@t`, predicting `w_t`.
    Query(usize),
}

impl fmt::Display for TwoStreamSlot {
    /// `p_3` (prompt), `w_3` (clean token), `m@3` (mask token predicting `w_3`), as the designer
    /// writes its inputs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TwoStreamSlot::Prompt(i) => write!(f, "p_{i}"),
            TwoStreamSlot::Content(t) => write!(f, "w_{t}"),
            TwoStreamSlot::Query(t) => write!(f, "m@{t}"),
        }
    }
}

/// Block Two-Stream Attention (THEORY §6) with its options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockTwoStream {
    /// Tokens `n`.
    pub n: usize,
    /// Block size `s ≥ 1`.
    pub block: usize,
    /// Attention inside a clean block.
    pub clean: Inner,
    /// Attention inside a mask block.
    pub query: Inner,
    /// Clean prompt tokens before block 0, read by everything.
    pub prompt: usize,
    /// Drop the last content block (read by nobody).
    pub drop_last: bool,
    /// Position order.
    pub order: TwoStreamOrder,
}

impl BlockTwoStream {
    /// The default layout of THEORY §6 for `n` tokens and block size `s`.
    pub fn new(n: usize, block: usize) -> Self {
        BlockTwoStream {
            n,
            block: block.max(1),
            clean: Inner::Full,
            query: Inner::Full,
            prompt: 0,
            drop_last: false,
            order: TwoStreamOrder::Grouped,
        }
    }

    pub(super) fn blocks(&self) -> usize {
        self.n.div_ceil(self.block)
    }

    pub(super) fn keeps_content(&self, t: usize) -> bool {
        !(self.drop_last && t / self.block + 1 == self.blocks())
    }

    /// The positions in layout order.
    pub fn slots(&self) -> Vec<TwoStreamSlot> {
        let mut out: Vec<TwoStreamSlot> = (0..self.prompt).map(TwoStreamSlot::Prompt).collect();
        let content = (0..self.n).filter(|&t| self.keeps_content(t)).map(TwoStreamSlot::Content);
        match self.order {
            TwoStreamOrder::Grouped => {
                out.extend(content);
                out.extend((0..self.n).map(TwoStreamSlot::Query));
            }
            TwoStreamOrder::Interleaved => {
                for b in 0..self.blocks() {
                    let range = b * self.block..((b + 1) * self.block).min(self.n);
                    out.extend(range.clone().filter(|&t| self.keeps_content(t)).map(TwoStreamSlot::Content));
                    out.extend(range.map(TwoStreamSlot::Query));
                }
            }
        }
        out
    }

    /// Whether slot `q` reads slot `k`.
    pub fn reads(&self, q: TwoStreamSlot, k: TwoStreamSlot) -> bool {
        use TwoStreamSlot::*;
        let b = |t: usize| t / self.block;
        let inner = |mode: Inner, tq: usize, tk: usize| mode == Inner::Full || tk <= tq;
        match (q, k) {
            (Prompt(i), Prompt(j)) => inner(self.clean, i, j),
            (Prompt(_), _) => false,
            (_, Prompt(_)) => true,
            (Content(tq), Content(tk)) => b(tk) < b(tq) || (b(tk) == b(tq) && inner(self.clean, tq, tk)),
            (Content(_), Query(_)) => false,
            (Query(tq), Content(tk)) => b(tk) < b(tq),
            (Query(tq), Query(tk)) => b(tk) == b(tq) && inner(self.query, tq, tk),
        }
    }

    /// The mask over [`Self::slots`].
    pub fn mask(&self) -> BitMatrix {
        let slots = self.slots();
        BitMatrix::from_fn(slots.len(), |q, k| self.reads(slots[q], slots[k]))
    }
}

/// What a position of the Butterfly layout holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ButterflySlot {
    /// Forward (causal) stream token `F_i`, holding `w_i`.
    Forward(usize),
    /// Backward (anti-causal) stream token `B_i`, holding `w_i`.
    Backward(usize),
    /// Predictor `P_i`, holding the aggregated token `w'_i` and predicting `w_i`.
    Predictor(usize),
}

impl fmt::Display for ButterflySlot {
    /// `F_3`, `B_3`, `P_3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ButterflySlot::Forward(i) => write!(f, "F_{i}"),
            ButterflySlot::Backward(i) => write!(f, "B_{i}"),
            ButterflySlot::Predictor(i) => write!(f, "P_{i}"),
        }
    }
}

/// Butterfly Attention (THEORY §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Butterfly {
    /// Tokens `n`.
    pub n: usize,
    /// Drop `F_{n-1}` and `B_0`, which nobody reads (3n-2 positions).
    pub minimal: bool,
}

impl Butterfly {
    /// The positions in layout order `[F | B | P]`.
    pub fn slots(&self) -> Vec<ButterflySlot> {
        let n = self.n;
        let skip = |keep: bool| keep || !self.minimal;
        let mut out: Vec<ButterflySlot> = (0..n).filter(|&i| skip(i + 1 != n)).map(ButterflySlot::Forward).collect();
        out.extend((0..n).filter(|&i| skip(i != 0)).map(ButterflySlot::Backward));
        out.extend((0..n).map(ButterflySlot::Predictor));
        out
    }

    /// Whether slot `q` reads slot `k`.
    pub fn reads(&self, q: ButterflySlot, k: ButterflySlot) -> bool {
        use ButterflySlot::*;
        match (q, k) {
            (Forward(a), Forward(b)) => b <= a,
            (Backward(a), Backward(b)) => b >= a,
            (Predictor(a), Forward(b)) => b < a,
            (Predictor(a), Backward(b)) => b > a,
            (Predictor(a), Predictor(b)) => a == b,
            _ => false,
        }
    }

    /// The mask over [`Self::slots`].
    pub fn mask(&self) -> BitMatrix {
        let slots = self.slots();
        BitMatrix::from_fn(slots.len(), |q, k| self.reads(slots[q], slots[k]))
    }
}

/// XLNet two-stream attention for `n` tokens and factorization order `perm` as one `2n` grid
/// `[h_0..h_{n-1} | g_0..g_{n-1}]`.
///
/// # Panics
/// If `perm` is not a permutation of `0..n` (checked by [`build_preset`] for user input).
pub fn xlnet(n: usize, perm: &[usize]) -> BitMatrix {
    let mut rank = vec![usize::MAX; n];
    for (r, &t) in perm.iter().enumerate() {
        rank[t] = r;
    }
    assert!(rank.iter().all(|&r| r != usize::MAX), "perm is not a permutation");
    BitMatrix::from_fn(2 * n, |q, k| {
        let (qs, tq, ks, tk) = (q >= n, q % n, k >= n, k % n);
        match (qs, ks) {
            (false, false) => rank[tk] <= rank[tq],
            (false, true) => false,
            (true, false) => rank[tk] < rank[tq],
            (true, true) => tk == tq,
        }
    })
}
