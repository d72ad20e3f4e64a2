//! The preset catalog: each mask family as a documented formula with named parameters.
//!
//! Conventions: `q` is the query (row), `k` the key (column), 0-based. Windows count keys
//! *including self*: `sliding-window w=4` lets `q` read `q-3..=q`. Presets whose positions are not
//! one per token (two-stream, butterfly) take `n` = number of tokens and say how many positions
//! they produce.

use std::collections::BTreeMap;
use std::fmt;

use crate::bits::BitMatrix;
use crate::rng::SplitMix64;

/// Kind of a preset parameter (for validation and for building UI controls).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// A non-negative integer at least `min`.
    Int {
        /// Smallest accepted value.
        min: usize,
    },
    /// A probability in `[0, 1]`.
    Fraction,
    /// `true` or `false`.
    Bool,
    /// Comma-separated non-negative integers (may be empty).
    IntList,
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
}

/// One parameter of a preset.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    /// Name as typed on the command line (`w=4`) and stored in provenance.
    pub name: &'static str,
    /// Kind and bounds.
    pub kind: ParamKind,
    /// Default value as text.
    pub default: &'static str,
    /// One-line meaning.
    pub help: &'static str,
}

/// A catalog entry.
#[derive(Clone, Copy, Debug)]
pub struct PresetSpec {
    /// Name (`causal`, `sliding-window`, ...).
    pub name: &'static str,
    /// The formula, `q` reads `k` iff ...
    pub formula: &'static str,
    /// How many positions the mask has, in terms of `n`.
    pub positions: &'static str,
    /// Parameters besides `n`.
    pub params: &'static [ParamSpec],
}

/// Why a preset could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PresetError {
    /// No preset of that name.
    #[error("unknown preset '{name}' (try `hasseflow preset --list`)")]
    Unknown {
        /// The name asked for.
        name: String,
    },
    /// A parameter the preset does not take.
    #[error("preset '{preset}' has no parameter '{param}' (it takes: {accepted})")]
    UnknownParam {
        /// Preset name.
        preset: String,
        /// Offending parameter.
        param: String,
        /// Comma-separated accepted names.
        accepted: String,
    },
    /// A value that does not parse or is out of range.
    #[error("preset '{preset}': parameter '{param}' = '{value}': {reason}")]
    BadValue {
        /// Preset name.
        preset: String,
        /// Parameter name.
        param: String,
        /// Value given.
        value: String,
        /// What is wrong.
        reason: String,
    },
    /// Resulting size out of range.
    #[error("preset '{preset}' with n = {n} gives {positions} positions; allowed 1..={max}")]
    Size {
        /// Preset name.
        preset: String,
        /// `n` asked for.
        n: usize,
        /// Positions it would have.
        positions: usize,
        /// Largest allowed.
        max: usize,
    },
}

const fn int(name: &'static str, min: usize, default: &'static str, help: &'static str) -> ParamSpec {
    ParamSpec { name, kind: ParamKind::Int { min }, default, help }
}
const fn flag(name: &'static str, default: &'static str, help: &'static str) -> ParamSpec {
    ParamSpec { name, kind: ParamKind::Bool, default, help }
}
const INNER: &[&str] = &["full", "causal"];
const ORDER: &[&str] = &["grouped", "interleaved"];
const SEED: ParamSpec = int("seed", 0, "0", "random seed (SplitMix64)");

/// The catalog, in display order.
pub const CATALOG: &[PresetSpec] = &[
    PresetSpec { name: "full", formula: "always", positions: "n", params: &[] },
    PresetSpec { name: "causal", formula: "k <= q", positions: "n", params: &[] },
    PresetSpec { name: "strictly-causal", formula: "k < q", positions: "n", params: &[] },
    PresetSpec { name: "anti-causal", formula: "k >= q", positions: "n", params: &[] },
    PresetSpec { name: "identity", formula: "k == q", positions: "n", params: &[] },
    PresetSpec {
        name: "cycle",
        formula: "k == (q - 1) mod n (a directed cycle; L* = n-1)",
        positions: "n",
        params: &[],
    },
    PresetSpec {
        name: "sliding-window",
        formula: "0 <= q-k < w (w keys including self)",
        positions: "n",
        params: &[int("w", 1, "4", "keys per query, including itself")],
    },
    PresetSpec {
        name: "bidirectional-window",
        formula: "|q-k| <= r",
        positions: "n",
        params: &[int("r", 0, "2", "radius on each side")],
    },
    PresetSpec {
        name: "dilated-window",
        formula: "q-k = i*d for some 0 <= i < w",
        positions: "n",
        params: &[int("w", 1, "4", "keys per query, including itself"), int("d", 1, "2", "dilation")],
    },
    PresetSpec {
        name: "chunked-causal",
        formula: "k <= q and k div c == q div c",
        positions: "n",
        params: &[int("c", 1, "4", "chunk length")],
    },
    PresetSpec {
        name: "block-causal",
        formula: "k div s <= q div s",
        positions: "n",
        params: &[int("s", 1, "4", "block size")],
    },
    PresetSpec {
        name: "prefix-lm",
        formula: "k <= q or k < p",
        positions: "n",
        params: &[int("p", 0, "2", "prefix length (bidirectional)")],
    },
    PresetSpec {
        name: "document",
        formula: "same segment (and k <= q when causal)",
        positions: "n",
        params: &[
            ParamSpec {
                name: "segments",
                kind: ParamKind::IntList,
                default: "",
                help: "segment lengths summing to n, e.g. 3,2,4 (empty: equal segments of `length`)",
            },
            int("length", 1, "4", "segment length when `segments` is empty (the last may be shorter)"),
            flag("causal", "false", "causal inside each segment"),
        ],
    },
    PresetSpec {
        name: "sink-window",
        formula: "k <= q and (k < sinks or q-k < w)",
        positions: "n",
        params: &[
            int("sinks", 0, "1", "attention-sink positions at the start"),
            int("w", 1, "4", "window keys including self"),
        ],
    },
    PresetSpec {
        name: "longformer",
        formula: "|q-k| <= r or q < g or k < g",
        positions: "n",
        params: &[int("g", 0, "1", "global positions at the start"), int("r", 0, "2", "window radius")],
    },
    PresetSpec {
        name: "bigbird",
        formula: "on blocks bq = q div b, bk = k div b: |bq-bk| <= r or bq < g or bk < g or bk in random(bq)",
        positions: "n",
        params: &[
            int("b", 1, "4", "block size"),
            int("r", 0, "1", "window radius in blocks"),
            int("g", 0, "1", "global blocks at the start"),
            int("random", 0, "1", "random key blocks per query block"),
            SEED,
        ],
    },
    PresetSpec {
        name: "strided",
        formula: "k <= q and (q-k < l or (q-k) mod l == 0)  (Sparse Transformer, strided)",
        positions: "n",
        params: &[int("l", 1, "4", "stride")],
    },
    PresetSpec {
        name: "fixed",
        formula: "k <= q and (k div l == q div l or k mod l >= l-c)  (Sparse Transformer, fixed)",
        positions: "n",
        params: &[int("l", 1, "4", "block length"), int("c", 0, "1", "summary positions at the end of each block")],
    },
    PresetSpec {
        name: "xlnet",
        formula: "content h_t reads h_u iff r(u) <= r(t); query g_t reads h_u iff r(u) < r(t), and g_t itself",
        positions: "2n: [h_0..h_{n-1} | g_0..g_{n-1}]",
        params: &[ParamSpec {
            name: "perm",
            kind: ParamKind::IntList,
            default: "",
            help: "factorization order z (a permutation of 0..n; empty = identity); r(t) = rank of t in z",
        }],
    },
    PresetSpec {
        name: "block-two-stream",
        formula: "content: b(k) <= b(q); query reads content: b(k) < b(q); query reads query: same block (THEORY §6)",
        positions: "2n + prompt (- s when drop_last)",
        params: &[
            int("s", 1, "2", "block size"),
            ParamSpec {
                name: "clean",
                kind: ParamKind::Choice(INNER),
                default: "full",
                help: "attention inside a clean block",
            },
            ParamSpec {
                name: "query",
                kind: ParamKind::Choice(INNER),
                default: "full",
                help: "attention inside a mask block",
            },
            int("prompt", 0, "0", "clean prompt tokens read by everything"),
            flag("drop_last", "false", "drop the last content block (read by nobody): 2n - s positions"),
            ParamSpec {
                name: "order",
                kind: ParamKind::Choice(ORDER),
                default: "grouped",
                help: "grouped [w | m] or interleaved [K0 Q0 K1 Q1 ...]",
            },
        ],
    },
    PresetSpec {
        name: "butterfly",
        formula: "F_q reads F_k iff k <= q; B_q reads B_k iff k >= q; P_q reads F_k iff k < q, B_k iff k > q, P_k iff k == q",
        positions: "3n: [F | B | P] (3n-2 when minimal)",
        params: &[flag("minimal", "false", "drop F_{n-1} and B_0, which nobody reads")],
    },
    PresetSpec {
        name: "random",
        formula: "each entry independently with probability p (only k <= q when causal)",
        positions: "n",
        params: &[
            ParamSpec { name: "p", kind: ParamKind::Fraction, default: "0.1", help: "probability of an entry" },
            flag("causal", "false", "only the causal triangle"),
            SEED,
        ],
    },
];

/// Looks a preset up by name.
pub fn preset_spec(name: &str) -> Option<&'static PresetSpec> {
    CATALOG.iter().find(|p| p.name == name)
}

/// Typed access to a preset's parameters, defaults filled in.
struct Args<'a> {
    spec: &'static PresetSpec,
    given: &'a BTreeMap<String, String>,
}

impl Args<'_> {
    fn raw(&self, name: &str) -> (&ParamSpec, String) {
        let p = self.spec.params.iter().find(|p| p.name == name).expect("parameter declared in CATALOG");
        (p, self.given.get(name).cloned().unwrap_or_else(|| p.default.to_string()))
    }

    fn bad(&self, name: &str, value: &str, reason: impl Into<String>) -> PresetError {
        PresetError::BadValue {
            preset: self.spec.name.into(),
            param: name.into(),
            value: value.into(),
            reason: reason.into(),
        }
    }

    fn int(&self, name: &str) -> Result<usize, PresetError> {
        let (p, v) = self.raw(name);
        let min = match p.kind {
            ParamKind::Int { min } => min,
            _ => 0,
        };
        let x: usize = v.trim().parse().map_err(|_| self.bad(name, &v, "not a non-negative integer"))?;
        if x < min {
            return Err(self.bad(name, &v, format!("must be at least {min}")));
        }
        Ok(x)
    }

    fn fraction(&self, name: &str) -> Result<f64, PresetError> {
        let (_, v) = self.raw(name);
        let x: f64 = v.trim().parse().map_err(|_| self.bad(name, &v, "not a number"))?;
        if !(0.0..=1.0).contains(&x) {
            return Err(self.bad(name, &v, "must be between 0 and 1"));
        }
        Ok(x)
    }

    fn flag(&self, name: &str) -> Result<bool, PresetError> {
        let (_, v) = self.raw(name);
        match v.trim() {
            "true" | "1" | "yes" => Ok(true),
            "false" | "0" | "no" => Ok(false),
            _ => Err(self.bad(name, &v, "expected true or false")),
        }
    }

    fn list(&self, name: &str) -> Result<Vec<usize>, PresetError> {
        let (_, v) = self.raw(name);
        v.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| s.parse::<usize>().map_err(|_| self.bad(name, &v, format!("'{s}' is not a non-negative integer"))))
            .collect()
    }

    fn choice(&self, name: &str) -> Result<&'static str, PresetError> {
        let (p, v) = self.raw(name);
        let ParamKind::Choice(options) = p.kind else { unreachable!("choice parameter declared as such") };
        options
            .iter()
            .find(|o| **o == v.trim())
            .copied()
            .ok_or_else(|| self.bad(name, &v, format!("expected one of {}", options.join(", "))))
    }
}

/// Attention inside a block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Inner {
    /// Every token of the block reads every other.
    #[default]
    Full,
    /// A token reads the tokens of its block up to itself.
    Causal,
}

/// Position order of a two-stream layout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
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

    fn blocks(&self) -> usize {
        self.n.div_ceil(self.block)
    }

    fn keeps_content(&self, t: usize) -> bool {
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

fn two_stream_from(a: &Args<'_>, n: usize) -> Result<BlockTwoStream, PresetError> {
    let inner = |v: &str| if v == "causal" { Inner::Causal } else { Inner::Full };
    Ok(BlockTwoStream {
        n,
        block: a.int("s")?,
        clean: inner(a.choice("clean")?),
        query: inner(a.choice("query")?),
        prompt: a.int("prompt")?,
        drop_last: a.flag("drop_last")?,
        order: if a.choice("order")? == "interleaved" { TwoStreamOrder::Interleaved } else { TwoStreamOrder::Grouped },
    })
}

/// Builds a preset by name for `n` tokens with text parameters (missing ones take their defaults).
///
/// # Errors
/// Unknown preset or parameter, a value that does not parse or is out of range, or a size outside
/// `1..=max_positions`.
///
/// # Examples
/// ```
/// use std::collections::BTreeMap;
/// use hasseflow_core::presets::build_preset;
/// let params = BTreeMap::from([("w".to_string(), "2".to_string())]);
/// let m = build_preset("sliding-window", 4, &params, 8192).unwrap();
/// assert_eq!(m.to_row_strings(), vec!["1...", "11..", ".11.", "..11"]);
/// ```
pub fn build_preset(
    name: &str,
    n: usize,
    params: &BTreeMap<String, String>,
    max_positions: usize,
) -> Result<BitMatrix, PresetError> {
    let spec = preset_spec(name).ok_or_else(|| PresetError::Unknown { name: name.into() })?;
    if let Some(bad) = params.keys().find(|k| !spec.params.iter().any(|p| p.name == k.as_str())) {
        return Err(PresetError::UnknownParam {
            preset: name.into(),
            param: bad.clone(),
            accepted: if spec.params.is_empty() {
                "no parameters".into()
            } else {
                spec.params.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
            },
        });
    }
    let a = Args { spec, given: params };
    let positions = match name {
        "xlnet" => 2 * n,
        "block-two-stream" => two_stream_from(&a, n)?.slots().len(),
        "butterfly" => Butterfly { n, minimal: a.flag("minimal")? }.slots().len(),
        _ => n,
    };
    if positions == 0 || positions > max_positions || n == 0 {
        return Err(PresetError::Size { preset: name.into(), n, positions, max: max_positions });
    }
    fn f(n: usize, p: impl FnMut(usize, usize) -> bool) -> BitMatrix {
        BitMatrix::from_fn(n, p)
    }
    let m = match name {
        "full" => BitMatrix::ones(n),
        "causal" => f(n, |q, k| k <= q),
        "strictly-causal" => f(n, |q, k| k < q),
        "anti-causal" => f(n, |q, k| k >= q),
        "identity" => BitMatrix::identity(n),
        "cycle" => f(n, |q, k| k == (q + n - 1) % n),
        "sliding-window" => {
            let w = a.int("w")?;
            f(n, |q, k| k <= q && q - k < w)
        }
        "bidirectional-window" => {
            let r = a.int("r")?;
            f(n, |q, k| q.abs_diff(k) <= r)
        }
        "dilated-window" => {
            let (w, d) = (a.int("w")?, a.int("d")?);
            f(n, |q, k| k <= q && (q - k) % d == 0 && (q - k) / d < w)
        }
        "chunked-causal" => {
            let c = a.int("c")?;
            f(n, |q, k| k <= q && k / c == q / c)
        }
        "block-causal" => {
            let s = a.int("s")?;
            f(n, |q, k| k / s <= q / s)
        }
        "prefix-lm" => {
            let p = a.int("p")?;
            f(n, |q, k| k <= q || k < p)
        }
        "document" => {
            let mut segments = a.list("segments")?;
            if segments.is_empty() {
                let len = a.int("length")?;
                segments = (0..n).step_by(len).map(|s| len.min(n - s)).collect();
            }
            if segments.iter().sum::<usize>() != n || segments.contains(&0) {
                let v = segments.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
                return Err(a.bad("segments", &v, format!("positive lengths must sum to n = {n}")));
            }
            let seg: Vec<usize> =
                segments.iter().enumerate().flat_map(|(i, &len)| std::iter::repeat_n(i, len)).collect();
            let causal = a.flag("causal")?;
            f(n, |q, k| seg[q] == seg[k] && (!causal || k <= q))
        }
        "sink-window" => {
            let (sinks, w) = (a.int("sinks")?, a.int("w")?);
            f(n, |q, k| k <= q && (k < sinks || q - k < w))
        }
        "longformer" => {
            let (g, r) = (a.int("g")?, a.int("r")?);
            f(n, |q, k| q.abs_diff(k) <= r || q < g || k < g)
        }
        "bigbird" => {
            let (b, r, g, rand) = (a.int("b")?, a.int("r")?, a.int("g")?, a.int("random")?);
            let blocks = n.div_ceil(b);
            let mut rng = SplitMix64::new(a.int("seed")? as u64);
            let mut random = vec![vec![false; blocks]; blocks];
            for (bq, row) in random.iter_mut().enumerate() {
                if bq < g {
                    continue;
                }
                for _ in 0..rand.min(blocks) {
                    row[rng.below(blocks)] = true;
                }
            }
            f(n, |q, k| {
                let (bq, bk) = (q / b, k / b);
                bq.abs_diff(bk) <= r || bq < g || bk < g || random[bq][bk]
            })
        }
        "strided" => {
            let l = a.int("l")?;
            f(n, |q, k| k <= q && (q - k < l || (q - k) % l == 0))
        }
        "fixed" => {
            let (l, c) = (a.int("l")?, a.int("c")?);
            f(n, |q, k| k <= q && (k / l == q / l || k % l + c >= l))
        }
        "xlnet" => {
            let mut perm = a.list("perm")?;
            if perm.is_empty() {
                perm = (0..n).collect();
            }
            let mut seen = vec![false; n];
            let ok = perm.len() == n && perm.iter().all(|&t| t < n && !std::mem::replace(&mut seen[t], true));
            if !ok {
                let v = perm.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
                return Err(a.bad("perm", &v, format!("must be a permutation of 0..{n}")));
            }
            xlnet(n, &perm)
        }
        "block-two-stream" => two_stream_from(&a, n)?.mask(),
        "butterfly" => Butterfly { n, minimal: a.flag("minimal")? }.mask(),
        "random" => {
            let p = a.fraction("p")?;
            let causal = a.flag("causal")?;
            let mut rng = SplitMix64::new(a.int("seed")? as u64);
            f(n, |q, k| (!causal || k <= q) && rng.next_f64() < p)
        }
        _ => unreachable!("every CATALOG entry is built above"),
    };
    debug_assert_eq!(m.n(), positions, "preset {name} size formula");
    Ok(m)
}

/// Position labels of the presets whose positions are not one per token: Block Two-Stream
/// (`p_0.., w_0.., m@0..`), Butterfly (`F_0.., B_0.., P_0..`) and XLNet (`h_0.., g_0..`: content
/// and query stream). `None` for the others (position `i` is token `i`). Same arguments and errors as
/// [`build_preset`]; the labels follow its layout.
///
/// # Examples
/// ```
/// use std::collections::BTreeMap;
/// use hasseflow_core::presets::preset_labels;
/// let labels = preset_labels("butterfly", 2, &BTreeMap::new(), 64).unwrap().unwrap();
/// assert_eq!(labels, ["F_0", "F_1", "B_0", "B_1", "P_0", "P_1"]);
/// assert_eq!(preset_labels("causal", 4, &BTreeMap::new(), 64).unwrap(), None);
/// ```
pub fn preset_labels(
    name: &str,
    n: usize,
    params: &BTreeMap<String, String>,
    max_positions: usize,
) -> Result<Option<Vec<String>>, PresetError> {
    // Validates the name, the parameters and the size exactly as the mask does.
    build_preset(name, n, params, max_positions)?;
    let spec = preset_spec(name).ok_or_else(|| PresetError::Unknown { name: name.into() })?;
    let a = Args { spec, given: params };
    let strings = |v: Vec<String>| Ok(Some(v));
    match name {
        "xlnet" => strings((0..n).map(|i| format!("h_{i}")).chain((0..n).map(|i| format!("g_{i}"))).collect()),
        "block-two-stream" => strings(two_stream_from(&a, n)?.slots().iter().map(ToString::to_string).collect()),
        "butterfly" => {
            strings(Butterfly { n, minimal: a.flag("minimal")? }.slots().iter().map(ToString::to_string).collect())
        }
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(name: &str, n: usize, params: &[(&str, &str)]) -> BitMatrix {
        let params = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        build_preset(name, n, &params, 1 << 13).unwrap()
    }

    #[test]
    fn every_preset_builds_with_defaults() {
        for spec in CATALOG {
            for n in [1, 2, 7, 16] {
                let m = build(spec.name, n, &[]);
                assert!(m.n() >= n, "{} n={n}", spec.name);
            }
        }
    }

    #[test]
    fn two_stream_sizes() {
        assert_eq!(build("block-two-stream", 6, &[("s", "2"), ("drop_last", "true")]).n(), 10);
        assert_eq!(build("block-two-stream", 7, &[("s", "3"), ("drop_last", "true")]).n(), 13);
        assert_eq!(build("block-two-stream", 6, &[("s", "2"), ("prompt", "3")]).n(), 15);
        assert_eq!(build("butterfly", 4, &[("minimal", "true")]).n(), 10);
        assert_eq!(build("xlnet", 5, &[("perm", "4,3,2,1,0")]).n(), 10);
    }

    #[test]
    fn xlnet_identity_is_block_two_stream_s1() {
        assert_eq!(build("xlnet", 6, &[]), build("block-two-stream", 6, &[("s", "1")]));
    }

    #[test]
    fn errors_name_the_problem() {
        let bad = |name: &str, params: &[(&str, &str)]| {
            let params = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            build_preset(name, 8, &params, 1 << 13).unwrap_err().to_string()
        };
        assert!(bad("nope", &[]).contains("unknown preset 'nope'"));
        assert!(bad("causal", &[("w", "3")]).contains("no parameter 'w'"));
        assert!(bad("sliding-window", &[("w", "0")]).contains("at least 1"));
        assert!(bad("sliding-window", &[("w", "x")]).contains("not a non-negative integer"));
        assert!(bad("document", &[("segments", "3,3")]).contains("sum to n = 8"));
        assert!(bad("xlnet", &[("perm", "0,0,1,2,3,4,5,6")]).contains("permutation"));
        assert!(bad("random", &[("p", "2")]).contains("between 0 and 1"));
        assert!(bad("block-two-stream", &[("order", "zigzag")]).contains("grouped, interleaved"));
        assert!(build_preset("causal", 9000, &BTreeMap::new(), 8192).is_err());
    }
}
