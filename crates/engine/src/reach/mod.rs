//! The structured reach engine: `R(L)` of a layer stack whose rows are unions of a few intervals,
//! in time and memory that grow with `n`, not `n²` (docs/REACH.md).
//!
//! A layer is either a rule ([`RuleLayer`]: a [`LayerKind`], a direction and the sequence
//! [`Overlays`]) or a general union-of-intervals mask ([`IntervalRows`], CSR). [`ReachStack::run`]
//! computes every layer's `R(l)[q] = ⋃_{k ∈ Ā_l[q]} R(l-1)[k]` exactly, with `R(0) = I`, and
//! returns a serde-serialisable [`ReachReport`] (the JSON contract of `hasseflow model --json`):
//! per-layer cells, lookback, leaks and requested query rows; growth, `full_at`, shortfall, and the
//! limit's classes, components and compressed Hasse diagram.
//!
//! # Semantics of the rule layers
//! Each [`LayerKind`] means what the mask functions of `transformers.masking_utils` compute on the
//! index grid (checked against **transformers 5.24.0**, the installed version; one batch, one
//! head, no padding):
//! - `Full`: `causal_mask_function` (`kv_idx <= q_idx`), or every key bidirectionally
//!   (`bidirectional_mask_function`);
//! - `Sliding { window: w }`, causal: `sliding_window_causal_mask_function(w)` =
//!   `and_masks(sliding_window_overlay(w), causal_mask_function)`: `q - w < k <= q`.
//!   Bidirectional: `q - w < k < q + w` as [`LayerKind`] documents it. **Transformers 5.24.0's
//!   `sliding_window_bidirectional_overlay(w)` is `|q - k| <= w`**, i.e. this variant with window
//!   `w + 1` (the fixture test checks exactly that mapping);
//! - `Chunked { size: c }`: `chunked_causal_mask_function(c, left_padding = 0)` =
//!   `and_masks(chunked_overlay(c, 0), causal_mask_function)`: `k / c == q / c` and `k <= q`;
//!   bidirectional: `chunked_overlay` alone;
//! - `Linear`: a recurrent layer, always `k <= q` (the `causal` flag does not widen it).
//!   `create_recurrent_attention_mask` carries only padding, so the recurrence is **not reset at
//!   document boundaries**: a linear layer ignores `Overlays::docs` and leaks across documents;
//! - `Overlays::docs` (packed documents): like `create_causal_mask` with a packed sequence, the
//!   layer's function (with its OR-ed overlays) is evaluated on positions that restart at 0 in
//!   every document (`remap_positions_for_packed_sequence`) and AND-ed with
//!   `packed_sequence_mask_function`: every document is its own sequence (chunks, sinks and the
//!   prefix count from the document's start);
//! - sinks (`k - start < s`, `k <= q` when causal) and the prefix (`q - start < p` and
//!   `k - start < p`) are OR-ed before the packed-sequence AND (as `or_mask_function` is), so they
//!   stay inside the query's document;
//! - global tokens (not a Transformers mask function; Longformer): `q ∈ G` reads every key and
//!   every query reads `k ∈ G`, across documents and directions (so they leak);
//! - image spans (`Overlays::images`), as Gemma 3 reads `token_type_ids`
//!   (`get_block_sequence_ids_for_mask`: a contiguous run of image tokens is one image, so spans
//!   that touch are one; `create_masks_for_vision_model`): a full (or indexed) layer is
//!   `create_causal_mask(block_sequence_ids=…)`, i.e. the layer's mask OR `blockwise_overlay`
//!   ("same image", at the positions as they are), then AND the packed documents; a sliding
//!   layer of window `w` is `create_causal_mask(or_mask_function=blockwise_overlay,
//!   and_mask_function=sliding_window_overlay(w))`, i.e. `(causal OR same image) AND k > q - w`:
//!   an image token reads `w - 1` keys back and its whole image ahead. With packed documents
//!   that whole function is remapped (`remap_positions_for_packed_sequence`), so the sliding
//!   layer looks "same image" up at the **document-relative** positions: in a document starting
//!   at `s`, `q` and `k` share an image when positions `q - s` and `k - s` do (in the first
//!   document, as given; in later ones, the spans of the sequence's start, shifted). A chunked
//!   layer ORs the image like a full one (`create_chunked_causal_mask(block_sequence_ids=…)`; no
//!   Transformers model combines the two). Recurrent, convolution and pointwise layers take no
//!   mask and ignore images. A bidirectional layer ORs them by the same rule. Every image row
//!   part contains `q`, so a row stays one interval;
//! - the diagonal is always added (`Ā = M ∨ I`, the residual connection).
//!
//! `tests/python/gen_layer_semantics.py` evaluates those library functions and writes
//! `crates/core/tests/fixtures/hf_layer_semantics.json`; `tests/reach.rs` checks the dense
//! builder ([`StructuredLayer::to_bitmatrix`]) against it cell for cell.

mod auto;
mod engine;
mod memory;
mod rows;
mod structure;

use serde::{Deserialize, Serialize};

use crate::bits::BitMatrix;
use crate::pattern::{EncoderSpec, LayerKind, ModelSpec, Overlays, Packing};
use crate::stack::{Layer, LayerStack};

pub use auto::{MAX_AUTO_LAYERS, reach_auto, reach_auto_while};
pub(crate) use engine::repeated_first_reach;
pub use engine::{ReachJob, STRUCTURED_SPANS_PER_ROW, repeated_growth};
pub use memory::{check_model_run, human_bytes, largest_context_within, model_run_bytes};
pub use rows::{IntervalRows, Span};
pub use structure::compress_order;

/// Largest `n` for which the limit's classes and Hasse diagram may be computed densely when the
/// limit is not a monotone single-interval structure, and for which [`ReachStack::from_bitmatrix`]
/// accepts masks that are not representable.
pub const DENSE_MAX: usize = 8192;

/// Default cap on the nodes listed in a [`CompressedHasse`].
pub const DEFAULT_MAX_HASSE_NODES: usize = 4096;

/// Default cap on the intervals one mask row may have to count as representable.
pub const DEFAULT_MAX_ROW_INTERVALS: usize = 16;

/// Cap on the intervals the general path may hold at once (about 1 GiB of spans and tree).
pub const MAX_SPANS: usize = 1 << 26;

/// Why a structured stack cannot be built or run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReachError {
    /// Positions are `u32`.
    #[error("n = {n} is too large: positions are 32-bit, so n must be below 2^32")]
    TooLarge {
        /// The requested size.
        n: u64,
    },
    /// Document lengths that do not add up to `n`.
    #[error("the document lengths sum to {sum}, but n = {n}")]
    BadDocuments {
        /// Sum of the lengths.
        sum: u64,
        /// The sequence length.
        n: u64,
    },
    /// A document of length 0.
    #[error("document {index} has length 0")]
    EmptyDocument {
        /// 0-based document index.
        index: usize,
    },
    /// A window or chunk size of 0.
    #[error("layer {layer}: {what} must be at least 1")]
    BadParameter {
        /// 1-based layer.
        layer: usize,
        /// The parameter's name.
        what: &'static str,
    },
    /// An overlay position outside the sequence.
    #[error("layer {layer}: {what} {value} is outside 0..{n}")]
    OverlayOutOfRange {
        /// 1-based layer.
        layer: usize,
        /// What the value is.
        what: &'static str,
        /// The value.
        value: u64,
        /// The sequence length.
        n: u64,
    },
    /// An interval mask whose size differs from the stack's.
    #[error("layer {layer} has {found} rows, expected n = {n}")]
    RowCount {
        /// 1-based layer.
        layer: usize,
        /// Rows found.
        found: u64,
        /// The sequence length.
        n: u64,
    },
    /// Interval rows that are not sorted, disjoint and inside `0..n`.
    #[error("row {row}: interval {index} [{lo}, {hi}] is not sorted, disjoint, inclusive and inside 0..{n}")]
    BadInterval {
        /// The row.
        row: u64,
        /// 0-based interval index within the row.
        index: usize,
        /// Its low end.
        lo: u64,
        /// Its high end.
        hi: u64,
        /// The sequence length.
        n: u64,
    },
    /// CSR offsets of the wrong length or not non-decreasing.
    #[error("interval rows: offsets must be n + 1 = {expected} non-decreasing values ending at the span count")]
    BadOffsets {
        /// `n + 1`.
        expected: u64,
    },
    /// A requested query outside the sequence.
    #[error("query {query} is outside 0..{n}")]
    QueryOutOfRange {
        /// The query.
        query: u64,
        /// The sequence length.
        n: u64,
    },
    /// A dense mask whose rows are not few intervals, too large to analyse densely.
    #[error(
        "mask row {row} has {intervals} intervals (cap {cap}), so the mask is not representable as \
         intervals, and n = {n} is above the dense limit {dense_max}"
    )]
    NotRepresentable {
        /// First row over the cap.
        row: u64,
        /// Its interval count.
        intervals: u64,
        /// The cap.
        cap: usize,
        /// The sequence length.
        n: u64,
        /// [`DENSE_MAX`].
        dense_max: usize,
    },
    /// The general path would hold too many intervals.
    #[error("the reach rows would hold more than {cap} intervals (general path); not computed")]
    TooManyIntervals {
        /// [`MAX_SPANS`].
        cap: usize,
    },
    /// A model run whose memory estimate ([`model_run_bytes`]) is above the caller's limit.
    #[error(
        "context {n}: the reach run would need about {} (estimate), more than the {} limit; {}",
        human_bytes(*bytes),
        human_bytes(*limit),
        over_memory_hint(*max_n, *docs, *layers)
    )]
    OverMemory {
        /// The context length asked for.
        n: u64,
        /// The estimate in bytes.
        bytes: u64,
        /// The limit in bytes.
        limit: u64,
        /// The largest context that fits with the same documents, overlays and queries.
        max_n: Option<u64>,
        /// The number of packed documents.
        docs: u64,
        /// The number of layers.
        layers: usize,
    },
    /// An encoder-decoder run whose encoder context does not fit.
    #[error(
        "the encoder context {context} must be at least 1 and below n = {n} (the encoder's and the \
         decoder's positions together)"
    )]
    EncoderContext {
        /// The encoder positions asked for.
        context: u64,
        /// All positions.
        n: u64,
    },
    /// Packed documents on a model whose handling of them no layer kind describes
    /// ([`Packing::Unmodelled`]).
    #[error(
        "docs: packed documents are not modelled for {model_type}: short convolutions beside its attention or recurrence read a few positions across each document boundary, which no layer kind describes"
    )]
    PackingUnmodelled {
        /// The model's type.
        model_type: String,
    },
    /// Overlays on an encoder-decoder run.
    #[error(
        "packed documents, sinks, global tokens, a prefix and image spans are not modelled for an encoder-decoder model"
    )]
    EncoderOverlays,
    /// An image span of length 0.
    #[error("image span {index} has length 0")]
    EmptyImage {
        /// 0-based index in the list as given.
        index: usize,
    },
    /// An image span that ends past the sequence.
    #[error("image span {start}:{len} ends at {}, past n = {n}", start.saturating_add(*len))]
    ImageOutOfRange {
        /// Its first position.
        start: u64,
        /// Its length.
        len: u64,
        /// The sequence length.
        n: u64,
    },
    /// Two image spans that share positions.
    #[error("image spans {}:{} and {}:{} overlap", first[0], first[1], second[0], second[1])]
    ImagesOverlap {
        /// The earlier span, `[start, length]`.
        first: [u64; 2],
        /// The later span.
        second: [u64; 2],
    },
    /// A dense layer stack of no layers.
    #[error("a dense layer stack needs at least one layer")]
    NoLayers,
    /// A depth outside what a run takes.
    #[error("layers = {layers} is out of range 1..={max}")]
    Layers {
        /// The depth asked for.
        layers: usize,
        /// The deepest allowed.
        max: usize,
    },
    /// A dense build asked for a size above [`DENSE_MAX`].
    #[error("n = {n} is above the dense limit {dense_max}")]
    TooLargeForDense {
        /// The sequence length.
        n: u64,
        /// [`DENSE_MAX`].
        dense_max: usize,
    },
}

/// A layer described by rule: a kind, a direction and the overlays.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleLayer {
    /// What the layer's attention reads.
    pub kind: LayerKind,
    /// Whether the layer also requires `k <= q` (ignored by `Linear`, which always does).
    pub causal: bool,
    /// Documents, sinks, globals, prefix (see the module docs for their exact meaning).
    pub overlays: Overlays,
}

/// One layer of a structured stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StructuredLayer {
    /// A rule layer.
    Rule(RuleLayer),
    /// A general mask given as sorted disjoint inclusive intervals per row (the diagonal is
    /// added by the engine).
    Intervals(IntervalRows),
}

/// A stack of structured layers over `n` positions, with the documents used for the leak check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReachStack {
    n: usize,
    layers: Vec<StructuredLayer>,
    documents: Vec<(u32, u32)>,
    rules: Vec<Option<engine::RuleCtx>>,
}

/// What [`ReachStack::run`] reports besides the per-layer figures.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReachOptions {
    /// Queries whose rows `R(l)[q]` are reported at every layer.
    pub queries: Vec<u64>,
    /// Cap on the Hasse nodes listed (the count is always exact when the diagram is computed).
    pub max_hasse_nodes: usize,
}

impl Default for ReachOptions {
    fn default() -> Self {
        ReachOptions { queries: Vec::new(), max_hasse_nodes: DEFAULT_MAX_HASSE_NODES }
    }
}

/// The report of one run (the JSON contract of `hasseflow model ... --json`). Every count of
/// cells is a `u64`: `n² < 2^64` for every `n < 2^32`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReachReport {
    /// Sequence length.
    pub n: u64,
    /// Number of layers `L`.
    pub depth: usize,
    /// Layers `1..=L`, in order.
    pub layers: Vec<LayerReport>,
    /// `|R(l)|` for `l = 0..=L` (`growth[0] = n`).
    pub growth: Vec<u64>,
    /// `|limit|`: cells of the reflexive-transitive closure of the union of all layers' masks
    /// (what arbitrarily many layers, in any order, could reach).
    pub limit_cells: u64,
    /// The first `l` in `0..=L` with `R(l) = limit`, or `None` when the stack is not deep enough.
    pub full_at: Option<usize>,
    /// What `R(L)` misses of the limit.
    pub shortfall: Shortfall,
    /// The limit's order structure.
    pub limit: LimitStructure,
}

/// What the last layer misses of the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shortfall {
    /// `|limit| - |R(L)|`: cells `(q, k)` not yet reached.
    pub cells: u64,
    /// Queries `q` whose row `R(L)[q]` is still short of the limit row.
    pub queries: u64,
}

/// One layer's figures.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerReport {
    /// 1-based layer index.
    pub layer: usize,
    /// The layer's description (`sliding_attention(4096)`, `intervals`).
    pub label: String,
    /// `|R(l)|`.
    pub cells: u64,
    /// Lookback of each query: `max |q - k|` over `k ∈ R(l)[q]` (causal: `q - min k`;
    /// bidirectional: the farthest distance reached on either side).
    pub lookback: Lookback,
    /// Whether some `R(l)[q]` holds a key of another document than `q`'s.
    pub leaks: bool,
    /// Number of such queries.
    pub leaking_queries: u64,
    /// Queries whose row is still short of the limit row.
    pub queries_short: u64,
    /// `R(l)[q]` of the requested queries.
    pub query_rows: Vec<QueryRow>,
}

/// Smallest, median and largest lookback over all queries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lookback {
    /// Smallest.
    pub min: u64,
    /// Lower median: the value of rank `⌊(n-1)/2⌋` of the sorted lookbacks.
    pub median: u64,
    /// Largest.
    pub max: u64,
}

/// A requested query's row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryRow {
    /// The query position.
    pub query: u64,
    /// `R(l)[q]` as sorted, disjoint, inclusive `[lo, hi]` intervals (0-based).
    pub intervals: Vec<[u64; 2]>,
}

/// The limit's classes, components and compressed Hasse diagram.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitStructure {
    /// Number of classes (strongly connected components), when computed.
    pub classes: Option<u64>,
    /// Number of weakly connected components of the limit (always computed).
    pub components: u64,
    /// The compressed Hasse diagram, when computed.
    pub hasse: Option<CompressedHasse>,
    /// How classes and Hasse were computed (`monotone-intervals`, `dense`), or why they were not.
    pub method: String,
}

/// The Hasse diagram with chains of consecutive positions collapsed into one node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompressedHasse {
    /// Nodes in the full compressed diagram (exact even when truncated).
    pub node_count: u64,
    /// Edges between nodes in the full compressed diagram.
    pub edge_count: u64,
    /// Whether `nodes` stops at the cap (then `edges` lists only edges between listed nodes).
    pub truncated: bool,
    /// The listed nodes, ordered by smallest position.
    pub nodes: Vec<HasseNode>,
    /// Covering edges between listed nodes.
    pub edges: Vec<HasseEdge>,
}

/// A node of the compressed Hasse diagram.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HasseNode {
    /// Index in `nodes`.
    pub id: u64,
    /// `chain`: singleton classes `first → … → last` at consecutive positions, each covered by
    /// the next (ascending or descending positions); `class`: one class of several positions.
    pub kind: HasseNodeKind,
    /// Chain: the minimal position (where information enters). Class: its smallest member.
    pub first: u64,
    /// Chain: the maximal position. Class: its largest member.
    pub last: u64,
    /// Number of positions.
    pub size: u64,
    /// Class members as runs `[a, b]` (one run `[min, max]` of the chain for chains).
    pub runs: Vec<[u64; 2]>,
    /// `a–b` (or `a` for one position; runs joined by `,` for classes).
    pub label: String,
}

/// Kind of a [`HasseNode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HasseNodeKind {
    /// A chain of singleton classes.
    Chain,
    /// One class of several positions.
    Class,
}

/// A covering edge: information flows from `lower` to `upper`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HasseEdge {
    /// Lower node id.
    pub lower: u64,
    /// Upper node id.
    pub upper: u64,
    /// The covered class's smallest position.
    pub lower_position: u64,
    /// The covering class's smallest position.
    pub upper_position: u64,
}

impl RuleLayer {
    /// A rule layer.
    pub fn new(kind: LayerKind, causal: bool, overlays: Overlays) -> RuleLayer {
        RuleLayer { kind, causal, overlays }
    }
}

impl StructuredLayer {
    /// The label used in reports.
    pub fn label(&self) -> String {
        match self {
            StructuredLayer::Rule(r) => r.kind.label(),
            StructuredLayer::Intervals(_) => "intervals".to_string(),
        }
    }

    /// The layer's mask over `n` positions as a dense matrix (the diagonal included, as the
    /// rule kinds include it; an interval layer gets it added).
    pub fn to_bitmatrix(&self, n: usize) -> Result<BitMatrix, ReachError> {
        if n > DENSE_MAX * 2 {
            return Err(ReachError::TooLargeForDense { n: n as u64, dense_max: DENSE_MAX * 2 });
        }
        let stack = ReachStack::new(n as u64, vec![self.clone()], Vec::new())?;
        Ok(stack.layer_rows(0).to_bitmatrix())
    }
}

/// What [`ReachError::OverMemory`] suggests instead.
fn over_memory_hint(max_n: Option<u64>, docs: u64, layers: usize) -> String {
    match max_n {
        Some(m) => format!("a context of at most {m} fits"),
        None => format!("{docs} documents over {layers} layers do not fit at any context: use fewer documents"),
    }
}

/// The decoder keys `[lo, hi]` (decoder coordinates) that decoder query `j` of `nd` reads in a
/// layer of `kind` ([`LayerKind::allows`] as one interval: each kind's keys are one).
fn decoder_span(kind: LayerKind, causal: bool, j: u32, nd: u32) -> (u32, u32) {
    let causal = causal || kind.always_causal();
    let clamp = |x: u64| x.min(nd as u64 - 1) as u32;
    match kind {
        LayerKind::Full | LayerKind::Linear | LayerKind::Indexed => (0, if causal { j } else { nd - 1 }),
        LayerKind::Sliding { window: w } | LayerKind::Conv { width: w } => {
            let w = w.max(1);
            (j.saturating_sub(w.min(u32::MAX as u64) as u32 - 1), if causal { j } else { clamp(j as u64 + w - 1) })
        }
        LayerKind::Chunked { size } => {
            let c = size.max(1);
            let cs = (j as u64 / c * c) as u32;
            (cs, if causal { j } else { clamp(cs as u64 + c - 1) })
        }
        LayerKind::Pointwise => (j, j),
    }
}

fn check_n(n: u64) -> Result<usize, ReachError> {
    if n >= u32::MAX as u64 { Err(ReachError::TooLarge { n }) } else { Ok(n as usize) }
}

pub(crate) fn doc_ranges(n: usize, docs: &[u64]) -> Result<Vec<(u32, u32)>, ReachError> {
    if docs.is_empty() {
        return Ok(if n == 0 { Vec::new() } else { vec![(0, n as u32 - 1)] });
    }
    let mut out = Vec::with_capacity(docs.len());
    let mut start = 0u64;
    for (index, &len) in docs.iter().enumerate() {
        if len == 0 {
            return Err(ReachError::EmptyDocument { index });
        }
        let end = start.saturating_add(len);
        if end > n as u64 {
            break;
        }
        out.push((start as u32, (end - 1) as u32));
        start = end;
    }
    let sum = docs.iter().fold(0u64, |a, &d| a.saturating_add(d));
    if sum != n as u64 {
        return Err(ReachError::BadDocuments { sum, n: n as u64 });
    }
    Ok(out)
}

impl ReachStack {
    /// A stack over `n` positions. `documents` are the lengths used for the leak check (empty:
    /// one document), independent of the layers' own overlays.
    pub fn new(n: u64, layers: Vec<StructuredLayer>, documents: Vec<u64>) -> Result<ReachStack, ReachError> {
        let n = check_n(n)?;
        let documents = doc_ranges(n, &documents)?;
        let mut rules = Vec::with_capacity(layers.len());
        let (mut shared, mut shared_images) = (None, None);
        for (i, layer) in layers.iter().enumerate() {
            match layer {
                StructuredLayer::Rule(r) => {
                    rules.push(Some(engine::RuleCtx::new(n, i + 1, r, &mut shared, &mut shared_images)?));
                }
                StructuredLayer::Intervals(rows) => {
                    if rows.n() != n {
                        return Err(ReachError::RowCount { layer: i + 1, found: rows.n() as u64, n: n as u64 });
                    }
                    rules.push(None);
                }
            }
        }
        Ok(ReachStack { n, layers, documents, rules })
    }

    /// [`ReachStack::from_model`] after [`check_model_run`]: refused before anything is allocated
    /// when a run reporting `queries` rows would need more than `max_bytes`
    /// ([`ReachError::OverMemory`]).
    pub fn from_model_within(
        spec: &ModelSpec,
        n: u64,
        overlays: &Overlays,
        queries: usize,
        max_bytes: u64,
    ) -> Result<ReachStack, ReachError> {
        check_model_run(spec, n, overlays, queries, max_bytes)?;
        ReachStack::from_model(spec, n, overlays)
    }

    /// The stack of a model at sequence length `n`: every layer gets the model's direction and
    /// the same overlays (without the documents when the model ignores packing,
    /// [`Packing::Ignored`]); the leak check uses `overlays.docs`. No memory check: see
    /// [`ReachStack::from_model_within`].
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn from_model(spec: &ModelSpec, n: u64, overlays: &Overlays) -> Result<ReachStack, ReachError> {
        if let Some(encoder) = &spec.encoder {
            return ReachStack::encoder_decoder(spec, encoder, n, overlays);
        }
        let applied = match spec.packing {
            Packing::Detected => overlays.clone(),
            Packing::Ignored => Overlays { docs: Vec::new(), ..overlays.clone() },
            Packing::Unmodelled if overlays.docs.len() > 1 => {
                return Err(ReachError::PackingUnmodelled { model_type: spec.model_type.clone() });
            }
            Packing::Unmodelled => overlays.clone(),
        };
        let layers = spec
            .layers
            .iter()
            .map(|&kind| StructuredLayer::Rule(RuleLayer::new(kind, spec.causal, applied.clone())))
            .collect();
        ReachStack::new(n, layers, overlays.docs.clone())
    }

    /// An encoder-decoder over `n` positions, the encoder's `encoder.context` first. Encoder
    /// layers are rule layers in which every decoder position is a document of its own (so it
    /// reads only itself); decoder layers are interval rows in which an encoder position reads
    /// only itself (the encoder is done) and decoder position `m + j` reads every encoder
    /// position (cross-attention to the encoder's last layer) and its own kind's decoder keys.
    fn encoder_decoder(
        spec: &ModelSpec,
        encoder: &EncoderSpec,
        n: u64,
        overlays: &Overlays,
    ) -> Result<ReachStack, ReachError> {
        let m = encoder.context;
        if m == 0 || m >= n {
            return Err(ReachError::EncoderContext { context: m, n });
        }
        if *overlays != Overlays::default() {
            return Err(ReachError::EncoderOverlays);
        }
        let nd = check_n(n)? - m as usize;
        let mut docs = vec![1u64; nd + 1];
        docs[0] = m;
        let enc_overlays = Overlays { docs, ..Overlays::default() };
        let mut layers: Vec<StructuredLayer> = encoder
            .layers
            .iter()
            .map(|&kind| StructuredLayer::Rule(RuleLayer::new(kind, encoder.causal, enc_overlays.clone())))
            .collect();
        let m = m as u32;
        let mut cache: Vec<(LayerKind, IntervalRows)> = Vec::new();
        for &kind in &spec.layers {
            if let Some((_, rows)) = cache.iter().find(|(k, _)| *k == kind) {
                layers.push(StructuredLayer::Intervals(rows.clone()));
                continue;
            }
            let mut offsets = Vec::with_capacity(n as usize + 1);
            let mut spans: Vec<Span> = Vec::with_capacity(nd + m as usize);
            offsets.extend(std::iter::repeat_n(0, m as usize + 1));
            for j in 0..nd as u32 {
                let (lo, hi) = decoder_span(kind, spec.causal, j, nd as u32);
                if lo == 0 {
                    spans.push([0, m + hi]);
                } else {
                    spans.push([0, m - 1]);
                    spans.push([m + lo, m + hi]);
                }
                offsets.push(spans.len());
            }
            let rows = IntervalRows::new(n, offsets, spans)?;
            cache.push((kind, rows.clone()));
            layers.push(StructuredLayer::Intervals(rows));
        }
        ReachStack::new(n, layers, Vec::new())
    }

    /// `layers` copies of a dense mask, when its rows are at most `max_row_intervals` intervals
    /// each (after adding the diagonal). A mask that is not representable is refused with
    /// [`ReachError::NotRepresentable`], which says which row and how many intervals.
    pub fn from_bitmatrix(mask: &BitMatrix, layers: usize, max_row_intervals: usize) -> Result<ReachStack, ReachError> {
        let rows = IntervalRows::from_bitmatrix(&mask.with_diagonal(), max_row_intervals).map_err(|(row, count)| {
            ReachError::NotRepresentable {
                row: row as u64,
                intervals: count as u64,
                cap: max_row_intervals,
                n: mask.n() as u64,
                dense_max: DENSE_MAX,
            }
        })?;
        ReachStack::new(mask.n() as u64, vec![StructuredLayer::Intervals(rows); layers], Vec::new())
    }

    /// Sequence length.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The layers.
    pub fn layers(&self) -> &[StructuredLayer] {
        &self.layers
    }

    /// The documents of the leak check, as inclusive position ranges.
    pub fn documents(&self) -> &[(u32, u32)] {
        &self.documents
    }

    /// Layer `index`'s adjacency `Ā` (0-based) as interval rows.
    pub fn layer_rows(&self, index: usize) -> IntervalRows {
        match (&self.layers[index], &self.rules[index]) {
            (_, Some(ctx)) => ctx.to_rows(),
            (StructuredLayer::Intervals(rows), None) => rows.with_diagonal(),
            (StructuredLayer::Rule(_), None) => unreachable!("rule layers have a context"),
        }
    }

    /// The dense [`LayerStack`] of the same layers (for the dense engine), up to [`DENSE_MAX`]
    /// positions.
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn to_layer_stack(&self) -> Result<LayerStack, ReachError> {
        if self.n > DENSE_MAX {
            return Err(ReachError::TooLargeForDense { n: self.n as u64, dense_max: DENSE_MAX });
        }
        let layers: Vec<Layer> =
            (0..self.layers.len()).map(|i| Layer::single(self.layer_rows(i).to_bitmatrix())).collect();
        // Every layer has one head of size n, so the only possible refusal is an empty stack.
        LayerStack::new(layers).map_err(|_| ReachError::NoLayers)
    }

    /// Every layer's `R(l)` as interval rows, `l = 0..=L` (memory `O(L · n · intervals)`: for
    /// tests and small `n`; [`ReachStack::run`] keeps only two layers).
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn all_reach_rows(&self) -> Result<Vec<IntervalRows>, ReachError> {
        engine::all_rows(self)
    }

    /// The limit (reflexive-transitive closure of the union of all layers' masks) as interval
    /// rows.
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn limit_rows(&self) -> Result<IntervalRows, ReachError> {
        Ok(engine::limit(self)?.to_interval_rows())
    }

    /// Runs the stack: every layer exactly, the limit, its structure.
    /// The same work as a [`ReachJob`] driven to its end.
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn run(&self, options: &ReachOptions) -> Result<ReachReport, ReachError> {
        engine::run(self, options)
    }
}
