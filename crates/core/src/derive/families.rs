//! Built-in task families (THEORY §6 and one from the paper's future work): autoregressive
//! generation, block generation, bidirectional full supervision (butterfly) and masked
//! autoencoding (MAE-style). Each builds a [`Family`] whose tasks are written from the point of
//! view of one inference computation; merging them ([`super::derive`]) derives the training mask.
//!
//! Tokens are 0-based: `w_0 .. w_{n-1}`. Every task mask is the task's own (dense) closure, so
//! each task analysis is one layer.
//!
//! The options structs are also the families' serialised form (inside
//! [`super::BuiltinFamily`]): field names as written here, every field but `n`, `block` and `span`
//! optional (missing: its default of `new`).

use serde::{Deserialize, Serialize};

use super::task::{Family, FamilyError, Input, InputId, Task, Token};
use crate::bits::BitMatrix;
use crate::presets::{BlockTwoStream, Butterfly, Inner, TwoStreamOrder};

fn param(family: &str, what: impl Into<String>) -> FamilyError {
    FamilyError::Parameter { family: family.into(), what: what.into() }
}

fn check_size(family: &str, positions: usize) -> Result<(), FamilyError> {
    if positions > super::MAX_TASK_POSITIONS {
        // The count saturates: `usize::MAX` stands for any count that overflowed.
        let count = if positions == usize::MAX { "over 2^64".to_string() } else { positions.to_string() };
        return Err(param(family, format!("{count} positions; the limit is {}", super::MAX_TASK_POSITIONS)));
    }
    Ok(())
}

/// One position of a task being built: what it holds, what it predicts, its layout group.
struct Slot<K> {
    kind: K,
    input: InputId,
    label: Option<InputId>,
    group: u32,
}

fn push<K: Copy>(
    family: &mut Family,
    name: String,
    slots: &[Slot<K>],
    reads: impl Fn(K, K) -> bool,
    padding: bool,
) -> Result<(), FamilyError> {
    let mask = BitMatrix::from_fn(slots.len(), |q, k| reads(slots[q].kind, slots[k].kind));
    family.push(Task {
        name,
        inputs: slots.iter().map(|s| s.input).collect(),
        labels: slots.iter().map(|s| s.label).collect(),
        groups: slots.iter().map(|s| s.group).collect(),
        mask,
        padding,
    })
}

/// The mask whose row `q` is the key range `range(q) = (start, end)`, filled a word at a time.
/// Every task mask of the block and butterfly families is of this form (in their layouts, what a
/// position reads is contiguous).
///
/// Complexity: `O(n²/64)`.
fn range_mask(n: usize, range: impl Fn(usize) -> (usize, usize)) -> BitMatrix {
    let mut m = BitMatrix::zeros(n);
    for q in 0..n {
        let (start, end) = range(q);
        let end = end.min(n);
        if start >= end {
            continue;
        }
        let row = m.row_mut(q);
        let (ws, we) = (start / 64, (end - 1) / 64);
        let head = !0u64 << (start % 64);
        let tail = !0u64 >> (63 - (end - 1) % 64);
        if ws == we {
            row[ws] |= head & tail;
        } else {
            row[ws] |= head;
            row[ws + 1..we].fill(!0);
            row[we] |= tail;
        }
    }
    m
}

fn task_from(name: String, slots: &[Slot<()>], range: impl Fn(usize) -> (usize, usize), padding: bool) -> Task {
    Task {
        name,
        inputs: slots.iter().map(|s| s.input).collect(),
        labels: slots.iter().map(|s| s.label).collect(),
        groups: slots.iter().map(|s| s.group).collect(),
        mask: range_mask(slots.len(), range),
        padding,
    }
}

/// The causal mask `k <= q`, filled a word at a time.
///
/// Complexity: `O(n²/64)`.
fn causal(n: usize) -> BitMatrix {
    let mut m = BitMatrix::zeros(n);
    for q in 0..n {
        let row = m.row_mut(q);
        let full = (q + 1) / 64;
        row[..full].fill(!0);
        let rem = (q + 1) % 64;
        if rem != 0 {
            row[full] = (1u64 << rem) - 1;
        }
    }
    m
}

/// Options of the autoregressive family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutoregressiveOptions {
    /// Tokens `n ≥ 2`.
    pub n: usize,
    /// Each task as one bidirectional block instead of the inference chain (R): nothing is shared.
    #[serde(default)]
    pub bidirectional: bool,
    /// Keep `w_{n-1}` (read by nobody) as a padding position: `n` positions instead of `n-1`.
    #[serde(default)]
    pub pad: bool,
}

impl AutoregressiveOptions {
    /// The default: inference chains, no padding.
    pub fn new(n: usize) -> Self {
        AutoregressiveOptions { n, bidirectional: false, pad: false }
    }
}

/// The autoregressive family: task `T_k` (`k = 1..n-1`) predicts `w_k` from `w_0..w_{k-1}`, as the
/// chain `w_0 -> ... -> w_{k-1}` that KV-cached inference computes, label on the top. Merging gives
/// `n(n-1)/2 -> n-1` nodes and the causal mask over `w_0..w_{n-2}`.
///
/// # Errors
/// `n < 2` (no task) or too many positions.
///
/// Complexity: `O(n³/64)` words to build the task masks.
pub fn autoregressive(o: AutoregressiveOptions) -> Result<Family, FamilyError> {
    let name = "autoregressive";
    if o.n < 2 {
        return Err(param(name, "n must be at least 2 (task T_k predicts w_k from w_0..w_{k-1}, k = 1..n-1)"));
    }
    check_size(name, o.n)?;
    let mut f = Family::new(format!("autoregressive n={}{}", o.n, if o.bidirectional { " bidirectional" } else { "" }));
    let w: Vec<InputId> = (0..o.n).map(|t| f.token("w", t)).collect();
    // The chain's mask is its closure: causal (or one full block), built word by word.
    let mask = |k: usize| if o.bidirectional { BitMatrix::ones(k) } else { causal(k) };
    for k in 1..o.n {
        let labels = (0..k).map(|t| (t + 1 == k).then_some(w[k])).collect();
        let inputs = w[..k].to_vec();
        f.push(Task { name: format!("T{k}"), inputs, labels, groups: vec![0; k], mask: mask(k), padding: false })?;
    }
    if o.pad {
        let n = o.n;
        let inputs = w.clone();
        f.push(Task {
            name: "pad".into(),
            inputs,
            labels: vec![None; n],
            groups: vec![0; n],
            mask: mask(n),
            padding: true,
        })?;
    }
    Ok(f)
}

/// Options of the block generation family; they mirror [`BlockTwoStream`]'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockOptions {
    /// Tokens `n ≥ 1`.
    pub n: usize,
    /// Block size `s ≥ 1`.
    pub block: usize,
    /// Attention inside a clean block (and inside the prompt).
    #[serde(default)]
    pub clean: Inner,
    /// Attention inside a mask block.
    #[serde(default)]
    pub query: Inner,
    /// Clean prompt tokens `p_0..` read by everything.
    #[serde(default)]
    pub prompt: usize,
    /// Minimal layout: drop the last clean block, which no task reads (`2n - s` positions).
    #[serde(default)]
    pub minimal: bool,
    /// Grouped `[prompt | w | m]` or interleaved `[prompt | K_0 Q_0 K_1 Q_1 ...]`.
    #[serde(default)]
    pub order: TwoStreamOrder,
}

impl BlockOptions {
    /// The default of THEORY §6: full attention inside blocks, no prompt, padded, grouped.
    pub fn new(n: usize, block: usize) -> Self {
        BlockOptions {
            n,
            block,
            clean: Inner::Full,
            query: Inner::Full,
            prompt: 0,
            minimal: false,
            order: TwoStreamOrder::Grouped,
        }
    }

    /// The preset these options should reproduce.
    pub fn preset(&self) -> BlockTwoStream {
        BlockTwoStream {
            n: self.n,
            block: self.block,
            clean: self.clean,
            query: self.query,
            prompt: self.prompt,
            drop_last: self.minimal,
            order: self.order,
        }
    }
}

#[derive(Clone, Copy)]
enum BlockSlot {
    Prompt(usize),
    Clean(usize),
    Query(usize),
}

/// The block generation family: `B = ceil(n/s)` tasks; `T_b` predicts block `b` from the prompt and
/// the clean blocks `0..b`: the clean tokens attend block-causally (the KV cache), the mask tokens
/// `m@t` of block `b` read all of that and each other, and `m@t` predicts `w_t`. Merging gives
/// `B(B+1)/2 -> 2B-1` nodes; the padded layout adds the last clean block (one padding node) and
/// reproduces [`BlockTwoStream`] exactly.
///
/// # Errors
/// `n = 0`, `s = 0` or too many positions.
///
/// Complexity: `O(B · (n + prompt)²/64)` words for the task masks.
pub fn block_generation(o: BlockOptions) -> Result<Family, FamilyError> {
    let name = "block";
    if o.n == 0 || o.block == 0 {
        return Err(param(name, "n and the block size must be at least 1"));
    }
    check_size(name, o.n.saturating_mul(2).saturating_add(o.prompt))?;
    let s = o.block;
    let blocks = o.n.div_ceil(s);
    let blk = |t: usize| t / s;
    let mut f = Family::new(format!("block generation n={} s={}", o.n, s));
    let w: Vec<InputId> = (0..o.n).map(|t| f.token("w", t)).collect();
    let m: Vec<InputId> = (0..o.n).map(|t| f.intern(Input::Mask(t))).collect();
    let p: Vec<InputId> = (0..o.prompt).map(|i| f.token("p", i)).collect();
    let group = |slot: BlockSlot| -> u32 {
        match (o.order, slot) {
            (_, BlockSlot::Prompt(_)) => 0,
            (TwoStreamOrder::Grouped, BlockSlot::Clean(_)) => 1,
            (TwoStreamOrder::Grouped, BlockSlot::Query(_)) => 2,
            (TwoStreamOrder::Interleaved, BlockSlot::Clean(t)) => 1 + 2 * blk(t) as u32,
            (TwoStreamOrder::Interleaved, BlockSlot::Query(t)) => 2 + 2 * blk(t) as u32,
        }
    };
    let slot = |kind: BlockSlot| {
        let (input, label) = match kind {
            BlockSlot::Prompt(i) => (p[i], None),
            BlockSlot::Clean(t) => (w[t], None),
            BlockSlot::Query(t) => (m[t], Some(w[t])),
        };
        Slot { kind: (), input, label, group: group(kind) }
    };
    // Layout of a task: [prompt | clean tokens 0..c | its mask block]. What a position reads is
    // a prefix of that layout:
    //   prompt i   -> the prompt (full) or p_0..p_i (causal);
    //   clean t    -> the prompt, the earlier clean blocks, and its own block (full) or its block
    //                 up to itself (causal): block-causal, the KV cache of the clean tokens;
    //   mask m@t   -> the prompt, every clean token of the task (the context of the block), and
    //                 its mask block (full) or the block up to itself (causal);
    // and nothing reads a mask token except its own block.
    let pr = o.prompt;
    let prompt_row = |i: usize| if o.clean == Inner::Full { pr } else { i + 1 };
    let clean_row = |t: usize, c: usize| pr + if o.clean == Inner::Full { ((blk(t) + 1) * s).min(c) } else { t + 1 };
    for b in 0..blocks {
        let (c, q0, q1) = (b * s, b * s, ((b + 1) * s).min(o.n));
        let kinds =
            (0..pr).map(BlockSlot::Prompt).chain((0..c).map(BlockSlot::Clean)).chain((q0..q1).map(BlockSlot::Query));
        let slots: Vec<Slot<()>> = kinds.map(slot).collect();
        let range = |q: usize| {
            let end = if q < pr {
                prompt_row(q)
            } else if q < pr + c {
                clean_row(q - pr, c)
            } else if o.query == Inner::Full {
                pr + c + (q1 - q0)
            } else {
                q + 1
            };
            (0, end)
        };
        f.push(task_from(format!("T{b}"), &slots, range, false))?;
    }
    if !o.minimal {
        let kinds = (0..pr).map(BlockSlot::Prompt).chain((0..o.n).map(BlockSlot::Clean));
        let slots: Vec<Slot<()>> = kinds.map(slot).collect();
        let range = |q: usize| (0, if q < pr { prompt_row(q) } else { clean_row(q - pr, o.n) });
        f.push(task_from("pad".into(), &slots, range, true))?;
    }
    Ok(f)
}

/// How the predictor `P_k` of the butterfly family holds its input. Serialised as
/// `{"neighbours": radius}` or `"mask"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Aggregate {
    /// The aggregated token `w'_k` built from `w_j` with `0 < |j-k| ≤ radius` (default radius 1:
    /// the mean of `w_{k-1}` and `w_{k+1}`, one neighbour at the ends).
    Neighbours(usize),
    /// A plain mask token `m@k`.
    Mask,
}

impl Default for Aggregate {
    /// The two neighbours: `Neighbours(1)`.
    fn default() -> Self {
        Aggregate::Neighbours(1)
    }
}

/// Options of the bidirectional fully supervised (butterfly) family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ButterflyOptions {
    /// Tokens `n ≥ 2`.
    pub n: usize,
    /// Minimal layout: leave out `F_{n-1}` and `B_0`, read by nobody (`3n-2` positions).
    #[serde(default)]
    pub minimal: bool,
    /// What `P_k` holds.
    #[serde(default)]
    pub aggregate: Aggregate,
}

impl ButterflyOptions {
    /// The default of THEORY §6: padded `3n` layout, `w'_k` from the two neighbours.
    pub fn new(n: usize) -> Self {
        ButterflyOptions { n, minimal: false, aggregate: Aggregate::default() }
    }

    /// The preset these options should reproduce.
    pub fn preset(&self) -> Butterfly {
        Butterfly { n: self.n, minimal: self.minimal }
    }
}

/// The bidirectional fully supervised family: task `T_k` predicts `w_k` from a left chain
/// `w_0 -> ... -> w_{k-1}` and a right chain `w_{n-1} -> ... -> w_{k+1}` (two KV caches) plus its
/// own aggregated token. Merging gives `n² -> 3n-2` nodes: the butterfly. The padded layout adds
/// `F_{n-1}` and `B_0` (one padding task holding both full chains) and reproduces [`Butterfly`].
///
/// # Errors
/// `n < 2`, radius 0, or too many positions.
///
/// Complexity: `O(n³/64)` words for the task masks.
pub fn butterfly(o: ButterflyOptions) -> Result<Family, FamilyError> {
    let name = "butterfly";
    if o.n < 2 {
        return Err(param(name, "n must be at least 2"));
    }
    if o.aggregate == Aggregate::Neighbours(0) {
        return Err(param(name, "the aggregation radius must be at least 1 (or use mask tokens)"));
    }
    check_size(name, o.n.saturating_mul(3))?;
    let n = o.n;
    let mut f = Family::new(format!("butterfly n={n}"));
    let w: Vec<InputId> = (0..n).map(|t| f.token("w", t)).collect();
    let fwd = |t: usize| Slot { kind: (), input: w[t], label: None, group: 0 };
    let bwd = |t: usize| Slot { kind: (), input: w[t], label: None, group: 1 };
    // Layout of T_k: [F_0..F_{k-1} | B_{k+1}..B_{n-1} | P_k]. F_j reads F_0..F_j (the left KV
    // cache), B_j reads B_j..B_{n-1} (the right one), P_k reads everything; each a range.
    for (k, &wk) in w.iter().enumerate() {
        let input = match o.aggregate {
            Aggregate::Mask => f.intern(Input::Mask(k)),
            Aggregate::Neighbours(r) => {
                let from = (k.saturating_sub(r)..=(k + r).min(n - 1)).filter(|&j| j != k).map(|j| Token::new("w", j));
                f.intern(Input::aggregated("w", k, from.collect()))
            }
        };
        let mut slots: Vec<Slot<()>> = (0..k).map(fwd).collect();
        slots.extend((k + 1..n).map(bwd));
        slots.push(Slot { kind: (), input, label: Some(wk), group: 2 });
        let range = |q: usize| {
            if q < k {
                (0, q + 1)
            } else if q + 1 < n {
                (q, n - 1)
            } else {
                (0, n)
            }
        };
        f.push(task_from(format!("T{k}"), &slots, range, false))?;
    }
    if !o.minimal {
        // Both full chains: [F_0..F_{n-1} | B_0..B_{n-1}].
        let mut slots: Vec<Slot<()>> = (0..n).map(fwd).collect();
        slots.extend((0..n).map(bwd));
        let range = |q: usize| if q < n { (0, q + 1) } else { (q, 2 * n) };
        f.push(task_from("pad".into(), &slots, range, true))?;
    }
    Ok(f)
}

/// Options of the masked autoencoding family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaeOptions {
    /// Tokens `n ≥ 1`.
    pub n: usize,
    /// Length of the masked span, `1..=n`.
    pub span: usize,
    /// Distance between span starts (0: equal to `span`, non-overlapping spans).
    #[serde(default)]
    pub stride: usize,
    /// The encoder reads the visible tokens causally instead of bidirectionally.
    #[serde(default)]
    pub causal_encoder: bool,
}

impl MaeOptions {
    /// Non-overlapping spans, bidirectional encoder.
    pub fn new(n: usize, span: usize) -> Self {
        MaeOptions { n, span, stride: 0, causal_encoder: false }
    }
}

#[derive(Clone, Copy)]
enum MaeSlot {
    Visible(usize),
    Masked,
}

/// The masked autoencoding family (an MAE-style family the paper leaves to future work): one
/// task per masked span `[a, a+span)`, `a = 0, stride, 2·stride, ...`; the visible tokens form
/// the encoder (one bidirectional block, or a causal chain with `causal_encoder`), the mask tokens
/// `m@t` of the span read the whole encoder and each other, and `m@t` predicts `w_t`.
///
/// What merging finds (see docs/FAMILY_FORMAT.md): with a bidirectional encoder no two tasks share
/// a node (every visible block has a different input multiset), so the merged mask is
/// block-diagonal; with a causal encoder the encoder prefixes before each span are shared.
///
/// # Errors
/// `n = 0`, `span` outside `1..=n`, or too many positions.
///
/// Complexity: `O((n / stride) · n²)` bit tests for the task masks.
pub fn masked_autoencoding(o: MaeOptions) -> Result<Family, FamilyError> {
    let name = "mae";
    if o.n == 0 || o.span == 0 || o.span > o.n {
        return Err(param(name, format!("need n ≥ 1 and 1 ≤ span ≤ n (n = {}, span = {})", o.n, o.span)));
    }
    let stride = if o.stride == 0 { o.span } else { o.stride };
    let starts: Vec<usize> = (0..=o.n - o.span).step_by(stride).collect();
    check_size(name, starts.len().saturating_mul(o.n))?;
    let mut f = Family::new(format!("mae n={} span={}", o.n, o.span));
    let w: Vec<InputId> = (0..o.n).map(|t| f.token("w", t)).collect();
    let m: Vec<InputId> = (0..o.n).map(|t| f.intern(Input::Mask(t))).collect();
    let reads = |q: MaeSlot, k: MaeSlot| match (q, k) {
        (MaeSlot::Visible(a), MaeSlot::Visible(b)) => !o.causal_encoder || b <= a,
        (MaeSlot::Visible(_), MaeSlot::Masked) => false,
        (MaeSlot::Masked, _) => true,
    };
    for a in starts {
        let span = a..a + o.span;
        let mut slots: Vec<Slot<MaeSlot>> = (0..o.n)
            .filter(|t| !span.contains(t))
            .map(|t| Slot { kind: MaeSlot::Visible(t), input: w[t], label: None, group: 0 })
            .collect();
        slots.extend(span.clone().map(|t| Slot { kind: MaeSlot::Masked, input: m[t], label: Some(w[t]), group: 1 }));
        push(&mut f, format!("span{a}"), &slots, reads, false)?;
    }
    Ok(f)
}
