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

use super::rows::{IntervalRows, Span, merge_into, normalise};
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
    docs: Vec<(u32, u32)>,
    sinks: u32,
    prefix: u32,
    globals: Vec<u32>,
}

impl RuleCtx {
    pub(crate) fn new(n: usize, layer: usize, rule: &RuleLayer) -> Result<RuleCtx, ReachError> {
        match rule.kind {
            LayerKind::Sliding { window: 0 } => return Err(ReachError::BadParameter { layer, what: "window" }),
            LayerKind::Chunked { size: 0 } => return Err(ReachError::BadParameter { layer, what: "chunk size" }),
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
        let causal = rule.causal || rule.kind == LayerKind::Linear;
        // A recurrent layer's state is not reset at document boundaries (Transformers'
        // `create_recurrent_attention_mask` carries only padding), so it ignores `docs`.
        let docs = doc_ranges(n, &o.docs)?;
        let docs = if rule.kind == LayerKind::Linear { doc_ranges(n, &[])? } else { docs };
        Ok(RuleCtx { n, kind: rule.kind, causal, docs, sinks: o.sinks as u32, prefix: o.prefix as u32, globals })
    }

    /// No overlay adds an interval: every row is the base interval (which contains `q`).
    fn simple(&self) -> bool {
        self.sinks == 0 && self.prefix == 0 && self.globals.is_empty()
    }

    /// The kind's interval within document `[ds, de]`; always contains `q`.
    #[inline]
    fn base(&self, q: u32, ds: u32, de: u32) -> (u32, u32) {
        let hi_causal = |hi: u32| if self.causal { q } else { hi };
        match self.kind {
            LayerKind::Full | LayerKind::Linear => (ds, hi_causal(de)),
            LayerKind::Sliding { window } => {
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
        let (lo, hi) = self.base(q, ds, de);
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

/// Reach rows: one interval per row (with a flag for non-decreasing ends), or general.
#[derive(Clone, Debug)]
pub(crate) enum Rows {
    Single { lo: Vec<u32>, hi: Vec<u32>, mono: bool },
    Multi(IntervalRows),
}

fn is_mono(lo: &[u32], hi: &[u32]) -> bool {
    lo.windows(2).all(|w| w[0] <= w[1]) && hi.windows(2).all(|w| w[0] <= w[1])
}

impl Rows {
    fn identity(n: usize) -> Rows {
        let lo: Vec<u32> = (0..n as u32).collect();
        Rows::Single { hi: lo.clone(), lo, mono: true }
    }

    pub(crate) fn from_intervals(rows: IntervalRows) -> Rows {
        let n = rows.n();
        if rows.span_count() == n && (0..n).all(|q| rows.row(q).len() == 1) {
            let lo: Vec<u32> = (0..n).map(|q| rows.row(q)[0][0]).collect();
            let hi: Vec<u32> = (0..n).map(|q| rows.row(q)[0][1]).collect();
            let mono = is_mono(&lo, &hi);
            Rows::Single { lo, hi, mono }
        } else {
            Rows::Multi(rows)
        }
    }

    pub(crate) fn n(&self) -> usize {
        match self {
            Rows::Single { lo, .. } => lo.len(),
            Rows::Multi(r) => r.n(),
        }
    }

    #[inline]
    pub(crate) fn row_into(&self, q: usize, out: &mut Vec<Span>) {
        match self {
            Rows::Single { lo, hi, .. } => out.push([lo[q], hi[q]]),
            Rows::Multi(r) => out.extend_from_slice(r.row(q)),
        }
    }

    #[inline]
    fn min_max(&self, q: usize) -> (u32, u32) {
        match self {
            Rows::Single { lo, hi, .. } => (lo[q], hi[q]),
            Rows::Multi(r) => {
                let row = r.row(q);
                (row[0][0], row[row.len() - 1][1])
            }
        }
    }

    #[inline]
    fn row_cells(&self, q: usize) -> u64 {
        match self {
            Rows::Single { lo, hi, .. } => (hi[q] - lo[q]) as u64 + 1,
            Rows::Multi(r) => r.row(q).iter().map(|s| (s[1] - s[0]) as u64 + 1).sum(),
        }
    }

    pub(crate) fn cells(&self) -> u64 {
        match self {
            Rows::Single { lo, hi, .. } => lo.iter().zip(hi).map(|(&l, &h)| (h - l) as u64 + 1).sum(),
            Rows::Multi(r) => r.cells(),
        }
    }

    pub(crate) fn row_u64(&self, q: usize) -> Vec<[u64; 2]> {
        let mut v = Vec::new();
        self.row_into(q, &mut v);
        v.iter().map(|s| [s[0] as u64, s[1] as u64]).collect()
    }

    pub(crate) fn to_interval_rows(&self) -> IntervalRows {
        match self {
            Rows::Multi(r) => r.clone(),
            Rows::Single { lo, hi, .. } => {
                let n = lo.len();
                IntervalRows::from_parts(n, (0..=n).collect(), lo.iter().zip(hi).map(|(&l, &h)| [l, h]).collect())
            }
        }
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

/// [`step_single`] for a rule layer without overlays over non-decreasing rows: row `q` reads the
/// keys `[a, b] = base(q)`, so its reach is `[lo[a], hi[b]]`; one document at a time, with the
/// kind's arithmetic out of the row loop (a causal layer's `b = q`, so `hi` is copied whole).
fn step_rule_mono(ctx: &RuleCtx, lo: &[u32], hi: &[u32], spare: (Vec<u32>, Vec<u32>)) -> Rows {
    let n = lo.len();
    let (mut nlo, mut nhi) = spare;
    nlo.clear();
    nhi.clear();
    nlo.resize(n, 0);
    nhi.resize(n, 0);
    for &(ds, de) in &ctx.docs {
        let (s, e) = (ds as usize, de as usize + 1);
        match ctx.kind {
            LayerKind::Sliding { window } => {
                // a = max(q - (w - 1), ds): the document's first row for the first w - 1
                // queries, then a shifted copy.
                let back = (window.min(u32::MAX as u64) as usize).saturating_sub(1);
                let head = (s + back).min(e);
                nlo[s..head].fill(lo[s]);
                if head < e {
                    nlo[head..e].copy_from_slice(&lo[s..e - back]);
                }
                if ctx.causal {
                    nhi[s..e].copy_from_slice(&hi[s..e]);
                } else {
                    // b = min(q + w - 1, de): a shifted copy, then the document's last row.
                    let tail = e.saturating_sub(back).max(s);
                    nhi[s..tail].copy_from_slice(&hi[s + back.min(e - s)..e]);
                    nhi[tail..e].fill(hi[e - 1]);
                }
            }
            LayerKind::Full | LayerKind::Linear => {
                nlo[s..e].fill(lo[s]);
                if ctx.causal {
                    nhi[s..e].copy_from_slice(&hi[s..e]);
                } else {
                    nhi[s..e].fill(hi[e - 1]);
                }
            }
            LayerKind::Chunked { .. } => {
                for q in ds..=de {
                    let (a, b) = ctx.base(q, ds, de);
                    nlo[q as usize] = lo[a as usize];
                    nhi[q as usize] = hi[b as usize];
                }
            }
        }
    }
    let mono = is_mono(&nlo, &nhi);
    Rows::Single { lo: nlo, hi: nhi, mono }
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
            Adj::Rule(ctx) if ctx.simple() => {
                let mut d = 0usize;
                step_single(
                    n,
                    |q| {
                        let q = q as u32;
                        while ctx.docs[d].1 < q {
                            d += 1;
                        }
                        let (ds, de) = ctx.docs[d];
                        ctx.base(q, ds, de)
                    },
                    lo,
                    hi,
                    false, // non-decreasing rows took step_rule_mono above
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

/// The layers as the step reads them: rule contexts, or interval rows with the diagonal.
enum LayerAdj<'a> {
    Rule(&'a RuleCtx),
    Rows(Rows),
}

impl LayerAdj<'_> {
    fn adj(&self) -> Adj<'_> {
        match self {
            LayerAdj::Rule(c) => Adj::Rule(c),
            LayerAdj::Rows(r) => Adj::Rows(r),
        }
    }
}

fn layer_adjs(stack: &ReachStack) -> Vec<LayerAdj<'_>> {
    stack
        .layers
        .iter()
        .zip(&stack.rules)
        .map(|(layer, rule)| match (layer, rule) {
            (_, Some(ctx)) => LayerAdj::Rule(ctx),
            (StructuredLayer::Intervals(rows), None) => LayerAdj::Rows(Rows::from_intervals(rows.with_diagonal())),
            (StructuredLayer::Rule(_), None) => unreachable!("rule layers have a context"),
        })
        .collect()
}

/// The union of all layers' `Ā` (distinct layers only).
fn union_adjacency(stack: &ReachStack, adjs: &[LayerAdj<'_>]) -> Rows {
    let n = stack.n;
    let mut distinct: Vec<usize> = Vec::new();
    for i in 0..stack.layers.len() {
        if !distinct.iter().any(|&j| stack.layers[j] == stack.layers[i]) {
            distinct.push(i);
        }
    }
    if distinct.is_empty() {
        return Rows::identity(n);
    }
    let all_single = distinct.iter().all(|&i| match &adjs[i] {
        LayerAdj::Rule(c) => c.simple(),
        LayerAdj::Rows(r) => matches!(r, Rows::Single { .. }),
    });
    if all_single {
        // Every row of every layer is one interval containing q: their union is one interval.
        let mut lo = vec![u32::MAX; n];
        let mut hi = vec![0u32; n];
        for &i in &distinct {
            match &adjs[i] {
                LayerAdj::Rule(ctx) => {
                    for &(ds, de) in &ctx.docs {
                        for q in ds..=de {
                            let (a, b) = ctx.base(q, ds, de);
                            let q = q as usize;
                            lo[q] = lo[q].min(a);
                            hi[q] = hi[q].max(b);
                        }
                    }
                }
                LayerAdj::Rows(r) => {
                    for q in 0..n {
                        let (a, b) = r.min_max(q);
                        lo[q] = lo[q].min(a);
                        hi[q] = hi[q].max(b);
                    }
                }
            }
        }
        let mono = is_mono(&lo, &hi);
        return Rows::Single { lo, hi, mono };
    }
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0);
    let mut spans = Vec::new();
    let (mut acc, mut row) = (Vec::new(), Vec::new());
    for q in 0..n {
        acc.clear();
        for &i in &distinct {
            adjs[i].adj().row(q, &mut row);
            acc.extend_from_slice(&row);
        }
        normalise(&mut acc);
        spans.extend_from_slice(&acc);
        offsets.push(spans.len());
    }
    Rows::from_intervals(IntervalRows::from_parts(n, offsets, spans))
}

/// The closure of `c` (which contains the diagonal) by repeated squaring `C ← C · C`.
fn close(mut c: Rows) -> Result<Rows, ReachError> {
    let mut cells = c.cells();
    loop {
        let next = step(Adj::Rows(&c), &c)?;
        let next_cells = next.cells();
        if next_cells == cells {
            return Ok(c);
        }
        c = next;
        cells = next_cells;
    }
}

pub(crate) fn limit(stack: &ReachStack) -> Result<Rows, ReachError> {
    let adjs = layer_adjs(stack);
    close(union_adjacency(stack, &adjs))
}

pub(crate) fn all_rows(stack: &ReachStack) -> Result<Vec<IntervalRows>, ReachError> {
    let adjs = layer_adjs(stack);
    let mut prev = Rows::identity(stack.n);
    let mut out = vec![prev.to_interval_rows()];
    for a in &adjs {
        prev = step(a.adj(), &prev)?;
        out.push(prev.to_interval_rows());
    }
    Ok(out)
}

/// `|R(L)|` for `L = 0, 1, …` of one mask repeated, until `limit_cells` is reached, by the
/// structured engine. `None` when a row of `adj` (which must contain the diagonal) has more than
/// `max_row_intervals` intervals, or the general path would be too large.
///
/// This is how [`crate::Analysis`] gets `L*` and growth for masks whose rows are few intervals.
pub fn repeated_growth(adj: &BitMatrix, limit_cells: usize, max_row_intervals: usize) -> Option<Vec<usize>> {
    let n = adj.n();
    let rows = IntervalRows::from_bitmatrix(adj, max_row_intervals).ok()?;
    let a = Rows::from_intervals(rows);
    let mut prev = Rows::identity(n);
    let mut growth = vec![n];
    let mut cells = n as u64;
    while cells < limit_cells as u64 {
        prev = step(Adj::Rows(&a), &prev).ok()?;
        let next = prev.cells();
        if next == cells {
            return None;
        }
        cells = next;
        growth.push(cells as usize);
    }
    Some(growth)
}

struct Stats {
    cells: u64,
    lookback: Lookback,
    leaking: u64,
    short: u64,
}

/// Collects the lookbacks of one layer as runs of constant or `+1`-stepping values (structured
/// layers give a handful of runs), falling back to the plain values when runs get many.
struct Lookbacks {
    /// `(start value, length, step 0 or 1)`.
    runs: Vec<(u32, u32, u32)>,
    cur: (u32, u32, u32),
    values: Vec<u32>,
    plain: bool,
    limit: usize,
}

impl Lookbacks {
    fn new(n: usize) -> Lookbacks {
        Lookbacks { runs: Vec::new(), cur: (0, 0, 0), values: Vec::new(), plain: false, limit: n / 16 + 16 }
    }

    fn reset(&mut self) {
        self.runs.clear();
        self.values.clear();
        self.cur = (0, 0, 0);
        self.plain = false;
    }

    #[inline]
    fn push(&mut self, v: u32) {
        if self.plain {
            self.values.push(v);
            return;
        }
        let (start, len, step) = self.cur;
        if len == 0 {
            self.cur = (v, 1, 0);
        } else if len == 1 && (v == start || v == start + 1) {
            self.cur = (start, 2, v - start);
        } else if v as u64 == start as u64 + step as u64 * len as u64 {
            self.cur.1 += 1;
        } else {
            self.runs.push(self.cur);
            self.cur = (v, 1, 0);
            if self.runs.len() > self.limit {
                self.plain = true;
                for &(s, l, st) in &self.runs {
                    self.values.extend((0..l).map(|i| s + st * i));
                }
                self.runs.clear();
            }
        }
    }

    /// The lower median (rank `⌊(len-1)/2⌋`), with every value in `min..=max`.
    fn median(&mut self, min: u32, max: u32) -> u32 {
        if self.plain {
            let (s, l, st) = self.cur;
            self.values.extend((0..l).map(|i| s + st * i));
            if self.values.is_empty() {
                return 0;
            }
            let mid = (self.values.len() - 1) / 2;
            return *self.values.select_nth_unstable(mid).1;
        }
        if self.cur.1 > 0 {
            self.runs.push(self.cur);
            self.cur = (0, 0, 0);
        }
        let total: u64 = self.runs.iter().map(|r| r.1 as u64).sum();
        if total == 0 {
            return 0;
        }
        let mid = (total - 1) / 2;
        let at_most = |x: u32| -> u64 {
            self.runs
                .iter()
                .map(|&(s, l, st)| {
                    if x < s {
                        0
                    } else if st == 0 {
                        l as u64
                    } else {
                        ((x - s) as u64 + 1).min(l as u64)
                    }
                })
                .sum()
        };
        // Smallest x with more than `mid` values at most x.
        let (mut lo, mut hi) = (min, max);
        while lo < hi {
            let m = lo + (hi - lo) / 2;
            if at_most(m) > mid { hi = m } else { lo = m + 1 }
        }
        lo
    }
}

fn stats(rows: &Rows, limit: &Rows, docs: &[(u32, u32)], lbs: &mut Lookbacks) -> Stats {
    lbs.reset();
    let (mut cells, mut leaking, mut short) = (0u64, 0u64, 0u64);
    let (mut lmin, mut lmax) = (u32::MAX, 0u32);
    match (rows, limit) {
        (Rows::Single { lo, hi, .. }, Rows::Single { lo: llo, hi: lhi, .. }) => {
            for &(ds, de) in docs {
                let (ds_, de_) = (ds as usize, de as usize + 1);
                let (lo, hi, llo, lhi) = (&lo[ds_..de_], &hi[ds_..de_], &llo[ds_..de_], &lhi[ds_..de_]);
                // Counts first, in a loop without branches (it vectorises)...
                for (q, (((&l, &h), &ll), &lh)) in (ds..).zip(lo.iter().zip(hi).zip(llo).zip(lhi)) {
                    cells += (h - l) as u64 + 1;
                    let lb = (q - l).max(h - q);
                    lmin = lmin.min(lb);
                    lmax = lmax.max(lb);
                    leaking += (l < ds || h > de) as u64;
                    short += (h - l != lh - ll) as u64;
                }
                // ...then the lookbacks' runs: most rows extend the current arithmetic run, on a
                // local copy (in registers); the others go through `push`.
                let mut cur = lbs.cur;
                let next = |c: (u32, u32, u32)| c.0 as u64 + c.2 as u64 * c.1 as u64;
                let mut expect = if cur.1 >= 2 { next(cur) } else { u64::MAX };
                for (q, (&l, &h)) in (ds..).zip(lo.iter().zip(hi)) {
                    let lb = (q - l).max(h - q);
                    if lb as u64 == expect {
                        cur.1 += 1;
                        expect += cur.2 as u64;
                    } else {
                        lbs.cur = cur;
                        lbs.push(lb);
                        cur = lbs.cur;
                        expect = if cur.1 >= 2 { next(cur) } else { u64::MAX };
                    }
                }
                lbs.cur = cur;
            }
        }
        _ => {
            for &(ds, de) in docs {
                for q in ds..=de {
                    let i = q as usize;
                    let (l, h) = rows.min_max(i);
                    let c = rows.row_cells(i);
                    cells += c;
                    let lb = (q - l).max(h - q);
                    lmin = lmin.min(lb);
                    lmax = lmax.max(lb);
                    lbs.push(lb);
                    leaking += (l < ds || h > de) as u64;
                    short += (c < limit.row_cells(i)) as u64;
                }
            }
        }
    }
    if lmin > lmax {
        lmin = 0;
    }
    let median = lbs.median(lmin, lmax);
    Stats { cells, lookback: Lookback { min: lmin as u64, median: median as u64, max: lmax as u64 }, leaking, short }
}

/// Where a [`ReachJob`] stands.
enum Phase {
    /// The limit is not computed yet.
    Limit,
    /// Layers `1..=done` are computed.
    Layers,
    /// Every layer is computed; the limit's structure is next.
    Structure,
    /// The report is assembled.
    Done(Box<ReachReport>),
    /// A step failed; every later step and [`ReachJob::finish`] return its error.
    Failed(ReachError),
    /// The report was taken.
    Taken,
}

/// A run of a [`ReachStack`] in steps, so a caller can pause between them (the web app yields to
/// the browser between steps): the limit first, then one layer per step, then the limit's
/// structure. [`ReachStack::run`] drives the same job to the end, so both give the same report.
///
/// # Examples
/// ```
/// use hasseflow_core::pattern::{LayerKind, Overlays};
/// use hasseflow_core::reach::{ReachJob, ReachOptions, ReachStack, RuleLayer, StructuredLayer};
/// let layer = StructuredLayer::Rule(RuleLayer::new(LayerKind::Sliding { window: 4 }, true, Overlays::default()));
/// let stack = ReachStack::new(64, vec![layer; 8], Vec::new()).unwrap();
/// let mut job = ReachJob::new(&stack, ReachOptions::default()).unwrap();
/// let mut steps = 0;
/// while !job.step().unwrap() {
///     steps += 1;
/// }
/// assert_eq!(job.layers_done(), 8);
/// let report = job.finish().unwrap();
/// assert_eq!(report, stack.run(&ReachOptions::default()).unwrap());
/// assert!(steps >= 8);
/// ```
pub struct ReachJob<'a> {
    stack: &'a ReachStack,
    options: ReachOptions,
    adjs: Vec<LayerAdj<'a>>,
    phase: Phase,
    limit: Rows,
    limit_cells: u64,
    lbs: Lookbacks,
    spare: Option<(Vec<u32>, Vec<u32>)>,
    prev: Rows,
    cells: u64,
    growth: Vec<u64>,
    full_at: Option<usize>,
    saturated: Option<Stats>,
    layers: Vec<LayerReport>,
    done: usize,
    short: u64,
}

impl<'a> ReachJob<'a> {
    /// A job that runs `stack` and reports the rows of `options.queries`.
    ///
    /// # Errors
    /// [`ReachError::QueryOutOfRange`] for a query outside `0..n`.
    pub fn new(stack: &'a ReachStack, options: ReachOptions) -> Result<ReachJob<'a>, ReachError> {
        let n = stack.n;
        for &q in &options.queries {
            if q >= n as u64 {
                return Err(ReachError::QueryOutOfRange { query: q, n: n as u64 });
            }
        }
        let adjs = layer_adjs(stack);
        Ok(ReachJob {
            stack,
            layers: Vec::with_capacity(adjs.len()),
            adjs,
            options,
            phase: Phase::Limit,
            limit: Rows::identity(0),
            limit_cells: 0,
            lbs: Lookbacks::new(n),
            spare: None,
            prev: Rows::identity(0),
            cells: n as u64,
            growth: vec![n as u64],
            full_at: None,
            saturated: None,
            done: 0,
            short: 0,
        })
    }

    /// Number of layers `L`.
    pub fn depth(&self) -> usize {
        self.adjs.len()
    }

    /// Layers computed so far.
    pub fn layers_done(&self) -> usize {
        self.done
    }

    /// Whether the report is ready ([`ReachJob::finish`] then does no more work).
    pub fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Done(_))
    }

    /// Does one step: the limit, one layer, or the limit's structure. Returns whether the report
    /// is ready.
    ///
    /// # Errors
    /// [`ReachError::TooManyIntervals`] when the general path would hold too many intervals (the
    /// job is then finished and [`ReachJob::finish`] returns the error too).
    pub fn step(&mut self) -> Result<bool, ReachError> {
        let r = self.advance();
        if let Err(e) = &r {
            self.phase = Phase::Failed(e.clone());
        }
        r
    }

    fn advance(&mut self) -> Result<bool, ReachError> {
        let n = self.stack.n;
        match self.phase {
            Phase::Limit => {
                self.limit = close(union_adjacency(self.stack, &self.adjs))?;
                self.limit_cells = self.limit.cells();
                self.prev = Rows::identity(n);
                if self.cells == self.limit_cells {
                    self.full_at = Some(0);
                } else {
                    self.short = (0..n).filter(|&q| self.limit.row_cells(q) > 1).count() as u64;
                }
                self.phase = if self.adjs.is_empty() { Phase::Structure } else { Phase::Layers };
            }
            Phase::Layers => {
                self.layer()?;
                if self.layers.len() == self.adjs.len() {
                    self.phase = Phase::Structure;
                }
            }
            Phase::Structure => {
                let structure = structure::analyse(&self.limit, self.options.max_hasse_nodes);
                self.phase = Phase::Done(Box::new(ReachReport {
                    n: n as u64,
                    depth: self.adjs.len(),
                    layers: std::mem::take(&mut self.layers),
                    growth: std::mem::take(&mut self.growth),
                    limit_cells: self.limit_cells,
                    full_at: self.full_at,
                    shortfall: Shortfall { cells: self.limit_cells - self.cells, queries: self.short },
                    limit: structure,
                }));
                return Ok(true);
            }
            Phase::Failed(ref e) => return Err(e.clone()),
            Phase::Done(_) | Phase::Taken => return Ok(true),
        }
        Ok(false)
    }

    /// Computes the next layer.
    fn layer(&mut self) -> Result<(), ReachError> {
        let i = self.layers.len();
        let (st, rows): (&Stats, &Rows) = if self.cells == self.limit_cells {
            // R(l-1) = limit, so every later layer is the limit too.
            if self.saturated.is_none() {
                self.saturated = Some(stats(&self.limit, &self.limit, &self.stack.documents, &mut self.lbs));
            }
            (self.saturated.as_ref().unwrap_or_else(|| unreachable!()), &self.limit)
        } else {
            let next = step_reusing(self.adjs[i].adj(), &self.prev, self.spare.take().unwrap_or_default())?;
            if let Rows::Single { lo, hi, .. } = std::mem::replace(&mut self.prev, next) {
                self.spare = Some((lo, hi));
            }
            let st = stats(&self.prev, &self.limit, &self.stack.documents, &mut self.lbs);
            self.saturated = Some(st);
            (self.saturated.as_ref().unwrap_or_else(|| unreachable!()), &self.prev)
        };
        let cells = st.cells;
        self.short = st.short;
        self.growth.push(cells);
        if self.full_at.is_none() && cells == self.limit_cells {
            self.full_at = Some(i + 1);
        }
        let query_rows =
            self.options.queries.iter().map(|&q| QueryRow { query: q, intervals: rows.row_u64(q as usize) }).collect();
        self.layers.push(LayerReport {
            layer: i + 1,
            label: self.stack.layers[i].label(),
            cells,
            lookback: st.lookback,
            leaks: st.leaking > 0,
            leaking_queries: st.leaking,
            queries_short: st.short,
            query_rows,
        });
        self.cells = cells;
        self.done += 1;
        if cells != self.limit_cells {
            self.saturated = None;
        }
        Ok(())
    }

    /// Runs the remaining steps and returns the report.
    ///
    /// # Errors
    /// The error of a failed step ([`ReachError::TooManyIntervals`]).
    pub fn finish(mut self) -> Result<ReachReport, ReachError> {
        loop {
            match std::mem::replace(&mut self.phase, Phase::Taken) {
                Phase::Done(report) => return Ok(*report),
                Phase::Failed(e) => return Err(e),
                Phase::Taken => unreachable!("finish consumes the job"),
                other => {
                    self.phase = other;
                    self.step()?;
                }
            }
        }
    }
}

pub(crate) fn run(stack: &ReachStack, options: &ReachOptions) -> Result<ReachReport, ReachError> {
    ReachJob::new(stack, options.clone())?.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// The deque path (non-monotone rows, sliding query ranges) and the O(1) path against the
    /// segment tree.
    #[test]
    fn single_paths_match_the_general_path() {
        let mut rng = SplitMix64::new(9);
        for case in 0..200 {
            let n = 1 + rng.below(300);
            let lo: Vec<u32> = (0..n).map(|q| (q - rng.below(q + 1).min(rng.below(20))) as u32).collect();
            let hi: Vec<u32> = (0..n).map(|q| (q + rng.below(n - q).min(rng.below(20))) as u32).collect();
            let mono = is_mono(&lo, &hi);
            let prev = Rows::Single { lo: lo.clone(), hi: hi.clone(), mono };
            let w = 1 + rng.below(30) as u32;
            let qa: Vec<u32> = (0..n as u32).map(|q| q.saturating_sub(w)).collect();
            let qb: Vec<u32> = (0..n as u32).map(|q| (q + rng.below(2) as u32 * w / 2).min(n as u32 - 1)).collect();
            let mut qb_mono = qb.clone();
            for i in 1..n {
                qb_mono[i] = qb_mono[i].max(qb_mono[i - 1]);
            }
            let adj = Rows::Single { lo: qa.clone(), hi: qb_mono.clone(), mono: true };
            let fast =
                step_single(n, |q| (qa[q], qb_mono[q]), &lo, &hi, mono, Default::default()).expect("monotone queries");
            let general = step_general(Adj::Rows(&adj), &prev).expect("small");
            assert_eq!(fast.to_interval_rows(), general.to_interval_rows(), "case {case}");
            if !mono {
                let direct_wrong = step_single(n, |q| (qa[q], qb_mono[q]), &lo, &hi, false, Default::default());
                assert!(direct_wrong.is_some());
            }
        }
    }
}
