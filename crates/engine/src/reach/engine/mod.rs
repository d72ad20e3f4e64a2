//! The layer step `R(l)[q] = ⋃_{k ∈ Ā_l[q]} R(l-1)[k]`, the limit, and the run.
//!
//! Two paths, both exact:
//! - **single**: every `R(l-1)[k]` is one interval `[lo_k, hi_k]` (it contains `k`) and every
//!   `Ā_l[q]` is one interval `[a_q, b_q]` with non-decreasing ends. The union over a contiguous
//!   range of keys is then the interval `[min lo, max hi]` over `a..=b`: read in `O(1)` when
//!   `lo` and `hi` are non-decreasing (`lo[a]`, `hi[b]`), else with two monotone deques
//!   (amortised `O(1)`, since the ranges slide forward).
//! - **general**: a segment tree over `k` whose nodes hold the merged interval lists of their
//!   ranges; a query range is `O(log n)` nodes, whose lists are merged.

use std::collections::VecDeque;
use std::sync::Arc;

use super::rows::{IntervalRows, Rows, Span, is_mono, merge_into, normalise};
use super::structure;
use super::{
    LayerReport, Lookback, MAX_SPANS, QueryRow, ReachError, ReachOptions, ReachReport, ReachStack, RuleLayer,
    Shortfall, StructuredLayer, doc_ranges,
};
use crate::bits::BitMatrix;
use crate::pattern::LayerKind;

/// A rule layer, checked and with its overlays precomputed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RuleCtx {
    n: usize,
    kind: LayerKind,
    causal: bool,
    /// The documents as inclusive ranges, shared by the layers of a stack with the same ones.
    docs: Arc<[(u32, u32)]>,
    sinks: u32,
    prefix: u32,
    globals: Vec<u32>,
    /// The image spans as inclusive ranges (touching spans merged), shared by the layers of a
    /// stack with the same ones, and how this layer's kind reads them.
    images: Arc<[(u32, u32)]>,
    image_rule: ImageRule,
}

/// How a layer ORs "same image" into its mask (Transformers 5.24, Gemma 3's
/// `create_masks_for_vision_model`; `crate::reach` has the details).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ImageRule {
    /// No attention mask to OR into (recurrent, convolution and pointwise layers).
    Ignored,
    /// `mask OR same_image(q, k)` at the positions as they are, then the document's AND (full and
    /// indexed layers: `block_sequence_ids`; chunked: the same argument of
    /// `create_chunked_causal_mask`).
    Union,
    /// A sliding layer of window `w`: `(causal OR same_image) AND k > q - w`, with "same image"
    /// looked up at document-relative positions (the `or_mask_function` is remapped with the rest).
    Window(u32),
}

/// The document ranges of the last rule layer built, with the lengths they came from, so the
/// next layer with the same documents shares them (a model's layers all have the same).
pub(crate) type SharedDocs<'a> = Option<(&'a [u64], Arc<[(u32, u32)]>)>;

/// The image ranges of the last rule layer built, with the spans they came from (as
/// [`SharedDocs`]).
pub(crate) type SharedImages<'a> = Option<(&'a [[u64; 2]], Arc<[(u32, u32)]>)>;

/// Image spans `[start, length]` as sorted inclusive ranges, spans that touch merged (a
/// contiguous run of image tokens is one image in Transformers).
///
/// # Errors
/// [`ReachError::EmptyImage`], [`ReachError::ImageOutOfRange`] or [`ReachError::ImagesOverlap`].
pub(crate) fn image_ranges(n: usize, images: &[[u64; 2]]) -> Result<Vec<(u32, u32)>, ReachError> {
    let mut spans = images.to_vec();
    for (index, &[start, len]) in spans.iter().enumerate() {
        if len == 0 {
            return Err(ReachError::EmptyImage { index });
        }
        if start.checked_add(len).is_none_or(|end| end > n as u64) {
            return Err(ReachError::ImageOutOfRange { start, len, n: n as u64 });
        }
    }
    spans.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(spans.len());
    let mut prev: Option<[u64; 2]> = None;
    for span in spans {
        let (s, e) = (span[0] as u32, (span[0] + span[1] - 1) as u32);
        match out.last_mut() {
            Some(last) if s <= last.1 => {
                return Err(ReachError::ImagesOverlap { first: prev.unwrap_or(span), second: span });
            }
            Some(last) if s == last.1 + 1 => last.1 = e,
            _ => out.push((s, e)),
        }
        prev = Some(span);
    }
    Ok(out)
}

impl RuleCtx {
    pub(crate) fn new<'a>(
        n: usize,
        layer: usize,
        rule: &'a RuleLayer,
        shared: &mut SharedDocs<'a>,
        shared_images: &mut SharedImages<'a>,
    ) -> Result<RuleCtx, ReachError> {
        match rule.kind {
            LayerKind::Sliding { window: 0 } => return Err(ReachError::BadParameter { layer, what: "window" }),
            LayerKind::Chunked { size: 0 } => return Err(ReachError::BadParameter { layer, what: "chunk size" }),
            LayerKind::Conv { width: 0 } => return Err(ReachError::BadParameter { layer, what: "kernel width" }),
            _ => {}
        }
        let o = &rule.overlays;
        let out = |what, value| ReachError::OverlayOutOfRange { layer, what, value, n: n as u64 };
        if o.sinks > n as u64 {
            return Err(out("sinks", o.sinks));
        }
        if o.prefix > n as u64 {
            return Err(out("prefix", o.prefix));
        }
        let mut globals = Vec::with_capacity(o.globals.len());
        for &g in &o.globals {
            if g >= n as u64 {
                return Err(out("global token", g));
            }
            globals.push(g as u32);
        }
        globals.sort_unstable();
        globals.dedup();
        let causal = rule.causal || rule.kind.always_causal();
        // A recurrent layer's state is not reset at document boundaries (Transformers'
        // `create_recurrent_attention_mask` carries only padding), so it ignores `docs`.
        let docs = match shared {
            Some((lengths, ranges)) if *lengths == o.docs.as_slice() => ranges.clone(),
            _ => {
                let ranges: Arc<[(u32, u32)]> = doc_ranges(n, &o.docs)?.into();
                *shared = Some((&o.docs, ranges.clone()));
                ranges
            }
        };
        let docs = if rule.kind.always_causal() { doc_ranges(n, &[])?.into() } else { docs };
        let images = match shared_images {
            Some((spans, ranges)) if *spans == o.images.as_slice() => ranges.clone(),
            _ => {
                let ranges: Arc<[(u32, u32)]> = image_ranges(n, &o.images)?.into();
                *shared_images = Some((&o.images, ranges.clone()));
                ranges
            }
        };
        let image_rule = match rule.kind {
            LayerKind::Full | LayerKind::Indexed | LayerKind::Chunked { .. } => ImageRule::Union,
            LayerKind::Sliding { window } => ImageRule::Window(window.min(u32::MAX as u64) as u32),
            LayerKind::Linear | LayerKind::Conv { .. } | LayerKind::Pointwise => ImageRule::Ignored,
        };
        let image_rule = if images.is_empty() { ImageRule::Ignored } else { image_rule };
        // The row arithmetic knows three shapes: a convolution is a causal window, the static
        // bound of an indexed layer is a full layer's keys, and a pointwise layer a window of 1.
        let kind = match rule.kind {
            LayerKind::Conv { width } => LayerKind::Sliding { window: width },
            LayerKind::Indexed => LayerKind::Full,
            LayerKind::Pointwise => LayerKind::Sliding { window: 1 },
            other => other,
        };
        Ok(RuleCtx {
            n,
            kind,
            causal,
            docs,
            sinks: o.sinks as u32,
            prefix: o.prefix as u32,
            globals,
            images,
            image_rule,
        })
    }

    /// No overlay adds an interval: every row is the base interval (which contains `q`).
    fn simple(&self) -> bool {
        self.single() && self.image_rule == ImageRule::Ignored
    }

    /// Every row is one interval containing `q` ([`RuleCtx::range`]): the kind's, and at most
    /// the image part, which contains `q` too. Its ends are non-decreasing in `q` (an image's
    /// part is one range over its queries, and the base's ends never go down).
    fn single(&self) -> bool {
        self.sinks == 0 && self.prefix == 0 && self.globals.is_empty()
    }

    /// The image span holding position `p`, if any.
    fn image_at(&self, p: u32) -> Option<(u32, u32)> {
        let i = self.images.partition_point(|s| s.1 < p);
        self.images.get(i).copied().filter(|s| s.0 <= p)
    }

    /// The keys "same image" adds to row `q` of document `[ds, de]`: one range containing `q`.
    #[inline]
    fn image_part(&self, q: u32, ds: u32, de: u32) -> Option<(u32, u32)> {
        match self.image_rule {
            ImageRule::Ignored => None,
            ImageRule::Union => self.image_at(q).map(|(s, e)| (s.max(ds), e.min(de))),
            ImageRule::Window(w) => {
                // Looked up at the document-relative position, shifted back to the document.
                let (s, e) = self.image_at(q - ds)?;
                let lo = (ds as u64 + s as u64).max((q as u64 + 1).saturating_sub(w as u64));
                Some((lo as u32, (ds as u64 + e as u64).min(de as u64) as u32))
            }
        }
    }

    /// Row `q` of `Ā` when [`RuleCtx::single`]: the kind's range and the image part's.
    #[inline]
    fn range(&self, q: u32, ds: u32, de: u32) -> (u32, u32) {
        let (lo, hi) = self.base(q, ds, de);
        match self.image_part(q, ds, de) {
            Some((a, b)) => (lo.min(a), hi.max(b)),
            None => (lo, hi),
        }
    }

    /// The kind's interval within document `[ds, de]`; always contains `q`.
    #[inline]
    fn base(&self, q: u32, ds: u32, de: u32) -> (u32, u32) {
        let hi_causal = |hi: u32| if self.causal { q } else { hi };
        match self.kind {
            LayerKind::Full | LayerKind::Linear | LayerKind::Indexed => (ds, hi_causal(de)),
            LayerKind::Pointwise => (q, q),
            LayerKind::Sliding { window } | LayerKind::Conv { width: window } => {
                let w = window.min(u32::MAX as u64) as u32;
                let lo = q.saturating_sub(w - 1).max(ds);
                (lo, hi_causal((q as u64 + w as u64 - 1).min(de as u64) as u32))
            }
            LayerKind::Chunked { size } => {
                // Chunks count from the document's start (positions restart per document).
                let c = size.min(u32::MAX as u64);
                let cs = ds as u64 + ((q - ds) as u64 / c) * c;
                let ce = (cs + c - 1).min(de as u64) as u32;
                ((cs as u32).max(ds), hi_causal(ce))
            }
        }
    }

    fn doc_of(&self, q: u32) -> (u32, u32) {
        let i = self.docs.partition_point(|d| d.1 < q);
        self.docs[i]
    }

    /// Row `q` of `Ā` (with the overlays and the diagonal), normalised, into `out`.
    fn row(&self, q: u32, out: &mut Vec<Span>) {
        out.clear();
        if self.globals.binary_search(&q).is_ok() {
            out.push([0, self.n as u32 - 1]);
            return;
        }
        let (ds, de) = self.doc_of(q);
        let (lo, hi) = self.range(q, ds, de);
        out.push([lo, hi]);
        // Sinks and prefix count from the document's start, like everything else per document.
        if self.sinks > 0 {
            let top = (ds as u64 + self.sinks as u64 - 1).min(de as u64) as u32;
            let top = if self.causal { top.min(q) } else { top };
            out.push([ds, top]);
        }
        if ((q - ds) as u64) < self.prefix as u64 {
            out.push([ds, (ds as u64 + self.prefix as u64 - 1).min(de as u64) as u32]);
        }
        for &g in &self.globals {
            out.push([g, g]);
        }
        normalise(out);
    }

    pub(crate) fn to_rows(&self) -> IntervalRows {
        let mut offsets = Vec::with_capacity(self.n + 1);
        offsets.push(0);
        let mut spans = Vec::new();
        let mut row = Vec::new();
        for q in 0..self.n {
            self.row(q as u32, &mut row);
            spans.extend_from_slice(&row);
            offsets.push(spans.len());
        }
        IntervalRows::from_parts(self.n, offsets, spans)
    }
}

/// A layer's adjacency as the step reads it.
#[derive(Clone, Copy)]
enum Adj<'a> {
    Rule(&'a RuleCtx),
    Rows(&'a Rows),
}

impl Adj<'_> {
    fn row(&self, q: usize, out: &mut Vec<Span>) {
        match self {
            Adj::Rule(ctx) => ctx.row(q as u32, out),
            Adj::Rows(rows) => {
                out.clear();
                rows.row_into(q, out);
            }
        }
    }
}

/// The single-interval step; `None` when the query ranges are not monotone (then the general
/// path runs).
fn step_single(
    n: usize,
    mut query: impl FnMut(usize) -> (u32, u32),
    lo: &[u32],
    hi: &[u32],
    mono: bool,
    spare: (Vec<u32>, Vec<u32>),
) -> Option<Rows> {
    let (mut nlo, mut nhi) = spare;
    nlo.clear();
    nhi.clear();
    nlo.reserve(n);
    nhi.reserve(n);
    let mut out_mono = true;
    if mono {
        nlo.resize(n, 0);
        nhi.resize(n, 0);
        let (lo, hi) = (&lo[..n], &hi[..n]);
        for (q, (l, h)) in nlo.iter_mut().zip(nhi.iter_mut()).enumerate() {
            let (a, b) = query(q);
            *l = lo[a as usize];
            *h = hi[b as usize];
        }
        // Non-decreasing rows read over non-decreasing ranges stay non-decreasing; check the
        // ranges' monotonicity on the result instead of per row.
        out_mono = is_mono(&nlo, &nhi);
    } else {
        let mut dmin: VecDeque<u32> = VecDeque::new();
        let mut dmax: VecDeque<u32> = VecDeque::new();
        let mut next = 0u32;
        let (mut pa, mut pb) = (0u32, 0u32);
        let (mut plo, mut phi) = (0u32, 0u32);
        for q in 0..n {
            let (a, b) = query(q);
            if a < pa || b < pb {
                return None;
            }
            pa = a;
            pb = b;
            while next <= b {
                let k = next as usize;
                while dmin.back().is_some_and(|&j| lo[j as usize] >= lo[k]) {
                    dmin.pop_back();
                }
                dmin.push_back(next);
                while dmax.back().is_some_and(|&j| hi[j as usize] <= hi[k]) {
                    dmax.pop_back();
                }
                dmax.push_back(next);
                next += 1;
            }
            while dmin.front().is_some_and(|&j| j < a) {
                dmin.pop_front();
            }
            while dmax.front().is_some_and(|&j| j < a) {
                dmax.pop_front();
            }
            let l = lo[*dmin.front()? as usize];
            let h = hi[*dmax.front()? as usize];
            out_mono &= l >= plo && h >= phi;
            plo = l;
            phi = h;
            nlo.push(l);
            nhi.push(h);
        }
    }
    Some(Rows::Single { lo: nlo, hi: nhi, mono: out_mono })
}

/// [`step_single`] for a rule layer without overlays over non-decreasing rows, into `spare`'s
/// allocations: a copy of the rows, stepped by [`rule_mono_in_place`].
fn step_rule_mono(ctx: &RuleCtx, lo: &[u32], hi: &[u32], spare: (Vec<u32>, Vec<u32>)) -> Rows {
    let (mut nlo, mut nhi) = spare;
    nlo.clear();
    nhi.clear();
    nlo.extend_from_slice(lo);
    nhi.extend_from_slice(hi);
    let mono = rule_mono_in_place(ctx, &mut nlo, &mut nhi);
    Rows::Single { lo: nlo, hi: nhi, mono }
}

/// One rule layer without overlays over non-decreasing rows `lo`, `hi`, in place (the run holds
/// two rows of `n`, not three): row `q` reads the keys `[a, b] = base(q)`, so its reach is
/// `[lo[a], hi[b]]`. `a <= q` and `b >= q`, so `lo` only ever copies from below and `hi` from
/// above: shifted copies (`copy_within`, which moves like `memmove`) and fills of values read
/// first. One document at a time, with the kind's arithmetic out of the row loop (a causal
/// layer's `b = q` leaves `hi` as it is). Returns whether the new rows are non-decreasing (always).
pub(super) fn rule_mono_in_place(ctx: &RuleCtx, lo: &mut [u32], hi: &mut [u32]) -> bool {
    rule_mono_in_place_from(ctx, lo, hi, &[])
}

/// [`rule_mono_in_place`], leaving alone the first `frozen[d]` rows of each of the layer's
/// documents (all of them when `frozen` is empty): rows that already equal their limit rows, which
/// no layer changes again (`R(l-1) ⊆ R(l) ⊆ limit`), so a run stops moving them once they do.
pub(super) fn rule_mono_in_place_from(ctx: &RuleCtx, lo: &mut [u32], hi: &mut [u32], frozen: &[u32]) -> bool {
    for (d, &(ds, de)) in ctx.docs.iter().enumerate() {
        let (s, e) = (ds as usize, de as usize + 1);
        // Rows s..a are frozen; only a..e may change.
        let a = (s + frozen.get(d).map_or(0, |&f| f as usize)).min(e);
        if a == e {
            continue;
        }
        let (first, last) = (lo[s], hi[e - 1]);
        match ctx.kind {
            LayerKind::Sliding { window } | LayerKind::Conv { width: window } => {
                // a = max(q - (w - 1), ds): the document's first row for the first w - 1
                // queries, then a shifted copy. (Clamped to the document first, so no sum
                // overflows a 32-bit usize.)
                let back = (window.min(u32::MAX as u64) as usize).saturating_sub(1).min(e - s);
                if a < s + back {
                    lo.copy_within(s..e - back, s + back);
                    lo[a..s + back].fill(first);
                } else {
                    lo.copy_within(a - back..e - back, a);
                }
                if !ctx.causal {
                    // b = min(q + w - 1, de): a shifted copy, then the document's last row.
                    if a + back < e {
                        hi.copy_within(a + back..e, a);
                    }
                    hi[(e - back).max(a)..e].fill(last);
                }
            }
            LayerKind::Pointwise => {}
            LayerKind::Full | LayerKind::Linear | LayerKind::Indexed => {
                lo[a..e].fill(first);
                if !ctx.causal {
                    hi[a..e].fill(last);
                }
            }
            LayerKind::Chunked { size } => {
                // Chunks count from the document's start (positions restart per document).
                let c = (size.min(u32::MAX as u64) as usize).max(1);
                let mut cs = s + (a - s) / c * c;
                while cs < e {
                    let ce = cs + c.min(e - cs);
                    let (first, last) = (lo[cs], hi[ce - 1]);
                    lo[cs.max(a)..ce].fill(first);
                    if !ctx.causal {
                        hi[cs.max(a)..ce].fill(last);
                    }
                    cs = ce;
                }
            }
        }
    }
    // Every row reads a key range whose ends never go down (within a document, and from one
    // document to the next), over non-decreasing rows: the result is non-decreasing, without a
    // pass over the rows to check it.
    debug_assert!(is_mono(lo, hi));
    true
}

/// Whether the layer's relation is a preorder (reflexive and transitive), so that `Ā·Ā = Ā`: the
/// same layer twice in a row reaches nothing new the second time (full and chunked attention
/// within documents, without overlays).
pub(super) fn idempotent(ctx: &RuleCtx) -> bool {
    ctx.simple()
        && matches!(ctx.kind, LayerKind::Full | LayerKind::Linear | LayerKind::Indexed | LayerKind::Chunked { .. })
}

/// Segment tree over keys; node `v` holds the merged rows of its key range.
struct ListTree {
    size: usize,
    node: Vec<(usize, usize)>,
    spans: Vec<Span>,
}

impl ListTree {
    fn build(prev: &Rows) -> Result<ListTree, ReachError> {
        let n = prev.n();
        let size = n.next_power_of_two().max(1);
        let mut node = vec![(0usize, 0usize); 2 * size];
        let mut spans: Vec<Span> = Vec::new();
        let mut row = Vec::new();
        for q in 0..n {
            let s = spans.len();
            row.clear();
            prev.row_into(q, &mut row);
            spans.extend_from_slice(&row);
            node[size + q] = (s, spans.len());
        }
        let mut merged = Vec::new();
        for v in (1..size).rev() {
            let (l, r) = (node[2 * v], node[2 * v + 1]);
            merged.clear();
            merge_into(&spans[l.0..l.1], &spans[r.0..r.1], &mut merged);
            let s = spans.len();
            spans.extend_from_slice(&merged);
            node[v] = (s, spans.len());
            if spans.len() > MAX_SPANS {
                return Err(ReachError::TooManyIntervals { cap: MAX_SPANS });
            }
        }
        Ok(ListTree { size, node, spans })
    }

    /// Appends the lists covering keys `a..=b`.
    fn query(&self, a: usize, b: usize, out: &mut Vec<Span>) {
        let (mut l, mut r) = (a + self.size, b + self.size + 1);
        while l < r {
            if l & 1 == 1 {
                let (s, e) = self.node[l];
                out.extend_from_slice(&self.spans[s..e]);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                let (s, e) = self.node[r];
                out.extend_from_slice(&self.spans[s..e]);
            }
            l >>= 1;
            r >>= 1;
        }
    }
}

fn step_general(adj: Adj<'_>, prev: &Rows) -> Result<Rows, ReachError> {
    let n = prev.n();
    let tree = ListTree::build(prev)?;
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0);
    let mut spans: Vec<Span> = Vec::new();
    let (mut arow, mut acc) = (Vec::new(), Vec::new());
    for q in 0..n {
        adj.row(q, &mut arow);
        acc.clear();
        for s in &arow {
            tree.query(s[0] as usize, s[1] as usize, &mut acc);
        }
        normalise(&mut acc);
        spans.extend_from_slice(&acc);
        offsets.push(spans.len());
        if spans.len() > MAX_SPANS {
            return Err(ReachError::TooManyIntervals { cap: MAX_SPANS });
        }
    }
    Ok(Rows::from_intervals(IntervalRows::from_parts(n, offsets, spans)))
}

/// One layer: `R(l) = Ā_l · R(l-1)`.
fn step(adj: Adj<'_>, prev: &Rows) -> Result<Rows, ReachError> {
    step_reusing(adj, prev, (Vec::new(), Vec::new()))
}

/// [`step`], writing single-interval results into `spare`'s allocations.
fn step_reusing(adj: Adj<'_>, prev: &Rows, spare: (Vec<u32>, Vec<u32>)) -> Result<Rows, ReachError> {
    let n = prev.n();
    if let Rows::Single { lo, hi, mono } = prev {
        let fast = match adj {
            Adj::Rule(ctx) if ctx.simple() && *mono => Some(step_rule_mono(ctx, lo, hi, spare)),
            Adj::Rule(ctx) if ctx.single() => {
                let mut d = 0usize;
                step_single(
                    n,
                    |q| {
                        let q = q as u32;
                        while ctx.docs[d].1 < q {
                            d += 1;
                        }
                        let (ds, de) = ctx.docs[d];
                        ctx.range(q, ds, de)
                    },
                    lo,
                    hi,
                    // Non-decreasing rows of a layer without overlays took step_rule_mono above;
                    // with images they read each range's ends (`lo[a]`, `hi[b]`).
                    *mono,
                    spare,
                )
            }
            Adj::Rows(Rows::Single { lo: alo, hi: ahi, .. }) => {
                step_single(n, |q| (alo[q], ahi[q]), lo, hi, *mono, spare)
            }
            _ => None,
        };
        if let Some(rows) = fast {
            return Ok(rows);
        }
    }
    step_general(adj, prev)
}

mod job;
mod limit;
mod stats;
#[cfg(test)]
mod tests;

pub use job::ReachJob;
pub(crate) use job::run;
pub use limit::{STRUCTURED_SPANS_PER_ROW, repeated_growth};
pub(crate) use limit::{all_rows, limit, repeated_first_reach};
