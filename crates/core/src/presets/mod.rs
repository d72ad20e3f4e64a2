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

mod args;
mod build;
mod shapes;
#[cfg(test)]
mod tests;

pub(crate) use args::{Args, BadValue, ParamTable, param_names, unknown_param};
pub use build::{build_preset, preset_labels, preset_provenance};
pub use shapes::{BlockTwoStream, Butterfly, ButterflySlot, Inner, TwoStreamOrder, TwoStreamSlot, xlnet};

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
