//! The layers as the step reads them, their union, and its closure: the limit `R(∞)`.

use super::*;

/// The layers as the step reads them: rule contexts, or interval rows with the diagonal.
pub(super) enum LayerAdj<'a> {
    Rule(&'a RuleCtx),
    Rows(Rows),
}

impl LayerAdj<'_> {
    pub(super) fn adj(&self) -> Adj<'_> {
        match self {
            LayerAdj::Rule(c) => Adj::Rule(c),
            LayerAdj::Rows(r) => Adj::Rows(r),
        }
    }
}

pub(super) fn layer_adjs(stack: &ReachStack) -> Vec<LayerAdj<'_>> {
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
pub(super) fn union_adjacency(stack: &ReachStack, adjs: &[LayerAdj<'_>]) -> Rows {
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
        LayerAdj::Rule(c) => c.single(),
        LayerAdj::Rows(r) => matches!(r, Rows::Single { .. }),
    });
    if all_single {
        // Every row of every layer is one interval containing q: their union is one interval.
        let mut lo = vec![u32::MAX; n];
        let mut hi = vec![0u32; n];
        for &i in &distinct {
            match &adjs[i] {
                LayerAdj::Rule(ctx) if ctx.simple() => fold_simple_ranges(ctx, &mut lo, &mut hi),
                LayerAdj::Rule(ctx) => {
                    for &(ds, de) in ctx.docs.iter() {
                        for q in ds..=de {
                            let (a, b) = ctx.range(q, ds, de);
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

/// `lo[q] = min(lo[q], a_q)` and `hi[q] = max(hi[q], b_q)` for the range `[a_q, b_q]` each row
/// of a rule layer without overlays reads ([`RuleCtx::range`]), one document at a time with the
/// kind's arithmetic out of the row loop.
fn fold_simple_ranges(ctx: &RuleCtx, lo: &mut [u32], hi: &mut [u32]) {
    for &(ds, de) in ctx.docs.iter() {
        let (s, e) = (ds as usize, de as usize + 1);
        let (lo, hi) = (&mut lo[s..e], &mut hi[s..e]);
        let rows = (ds..=de).zip(lo.iter_mut().zip(hi.iter_mut()));
        match ctx.kind {
            LayerKind::Full | LayerKind::Linear | LayerKind::Indexed => {
                let top = |q: u32| if ctx.causal { q } else { de };
                rows.for_each(|(q, (l, h))| {
                    *l = (*l).min(ds);
                    *h = (*h).max(top(q));
                });
            }
            LayerKind::Pointwise => rows.for_each(|(q, (l, h))| {
                *l = (*l).min(q);
                *h = (*h).max(q);
            }),
            LayerKind::Sliding { window } | LayerKind::Conv { width: window } => {
                let back = (window.min(u32::MAX as u64) as u32).max(1) - 1;
                rows.for_each(|(q, (l, h))| {
                    *l = (*l).min(q.saturating_sub(back).max(ds));
                    let top = if ctx.causal { q } else { (q as u64 + back as u64).min(de as u64) as u32 };
                    *h = (*h).max(top);
                });
            }
            LayerKind::Chunked { size } => {
                let c = size.min(u32::MAX as u64).max(1);
                rows.for_each(|(q, (l, h))| {
                    let cs = ds as u64 + (q - ds) as u64 / c * c;
                    *l = (*l).min(cs as u32);
                    let top = if ctx.causal { q } else { (cs + c - 1).min(de as u64) as u32 };
                    *h = (*h).max(top);
                });
            }
        }
    }
}

/// The closure of `c` (which contains the diagonal): non-decreasing single intervals in one pass
/// each way ([`close_mono_in_place`]), any other rows by repeated squaring `C ← C · C`.
pub(super) fn close(mut c: Rows) -> Result<Rows, ReachError> {
    if let Rows::Single { lo, hi, mono: true } = &mut c {
        // Already transitive (a model whose layers include a full one): one pass that writes
        // nothing, and stops at the first row that is not.
        if lo.iter().zip(hi.iter()).all(|(&l, &h)| lo[l as usize] == l && hi[h as usize] == h) {
            return Ok(c);
        }
        if lo.iter().zip(hi.iter()).zip(0u32..).all(|((&l, &h), q)| l <= q && q <= h) {
            close_mono_in_place(lo, hi);
            return Ok(c);
        }
    }
    close_by_squaring(c)
}

/// [`close`]'s closure of non-decreasing rows `[lo[q], hi[q]]` that contain `q`, in place:
/// `C·C[q] = [lo[lo[q]], hi[hi[q]]]` and the reach after `k` steps is `[lo^k(q), hi^k(q)]`, so the
/// closure is `lo*(q) = lo*(lo[q])` (with `lo[q] <= q`, known once the rows below are done: one
/// pass upwards) and `hi*(q) = hi*(hi[q])` (one pass downwards). Squaring is the oracle
/// (`closing_in_one_pass_is_squaring_to_the_fixpoint`).
fn close_mono_in_place(lo: &mut [u32], hi: &mut [u32]) {
    for q in 0..lo.len() {
        let l = lo[q] as usize;
        if l < q {
            lo[q] = lo[l];
        }
    }
    for q in (0..hi.len()).rev() {
        let h = hi[q] as usize;
        if h > q {
            hi[q] = hi[h];
        }
    }
}

/// [`close`] by squaring, `C <- C·C` until the cells stop growing (any rows).
pub(super) fn close_by_squaring(mut c: Rows) -> Result<Rows, ReachError> {
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

#[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
pub(crate) fn limit(stack: &ReachStack) -> Result<Rows, ReachError> {
    let adjs = layer_adjs(stack);
    close(union_adjacency(stack, &adjs))
}

#[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
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
/// `max_row_intervals` intervals, or the reach rows fragment into more than
/// [`STRUCTURED_SPANS_PER_ROW`]` · n` intervals (random and other sparse masks: a bit sweep is
/// faster there), or the general path would be too large.
///
/// This is how [`crate::Analysis`] gets `L*` and growth for masks whose rows are few intervals.
#[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
pub fn repeated_growth(adj: &BitMatrix, limit_cells: usize, max_row_intervals: usize) -> Option<Vec<usize>> {
    let n = adj.n();
    let rows = IntervalRows::from_bitmatrix(adj, max_row_intervals).ok()?;
    let a = Rows::from_intervals(rows);
    let mut prev = Rows::identity(n);
    let mut growth = vec![n];
    let mut cells = n as u64;
    while cells < limit_cells as u64 {
        if matches!(&prev, Rows::Multi(r) if r.span_count() > STRUCTURED_SPANS_PER_ROW * n) {
            return None;
        }
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

/// Intervals per row, on average, past which [`repeated_growth`] and [`repeated_first_reach`]
/// give up on a layer's reach rows: fragmented rows cost the segment tree more than a bit sweep.
pub const STRUCTURED_SPANS_PER_ROW: usize = 16;

/// The first-reach layers of one mask repeated in every layer, by the structured engine: calls
/// `fill(layer, q, lo, hi)` for every run `lo..=hi` of row `q`'s cells first reached at `layer`
/// (`≥ 1`; each cell once) and returns `L*`. `adj` must contain the diagonal.
///
/// `None` when a row of `adj` has more than `max_row_intervals` intervals (before any call), or
/// when a layer's reach rows hold more than `max_spans` intervals (fragmented rows, where a bit
/// sweep is faster): the runs given until then are exact, and a caller that finishes by another
/// method may keep them.
///
/// Complexity: per layer, one step of the engine (`O(n)` for single-interval rows) and the
/// difference of consecutive rows, `O(spans)`; `L* + 1` layers.
#[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
pub(crate) fn repeated_first_reach(
    adj: &BitMatrix,
    max_row_intervals: usize,
    max_spans: usize,
    mut fill: impl FnMut(usize, usize, u32, u32),
) -> Option<usize> {
    let n = adj.n();
    let rows = IntervalRows::from_bitmatrix(adj, max_row_intervals).ok()?;
    let a = Rows::from_intervals(rows);
    let mut prev = Rows::identity(n);
    let mut cells = n as u64;
    let mut layer = 0;
    let (mut was, mut now) = (Vec::new(), Vec::new());
    loop {
        if matches!(&prev, Rows::Multi(r) if r.span_count() > max_spans) {
            return None;
        }
        let next = step(Adj::Rows(&a), &prev).ok()?;
        let next_cells = next.cells();
        if next_cells == cells {
            return Some(layer);
        }
        layer += 1;
        match (&prev, &next) {
            (Rows::Single { lo: pl, hi: ph, .. }, Rows::Single { lo: nl, hi: nh, .. }) => {
                for q in 0..n {
                    // R(l-1)[q] ⊆ R(l)[q], both one interval: the new cells are at its two ends.
                    if nl[q] < pl[q] {
                        fill(layer, q, nl[q], pl[q] - 1);
                    }
                    if nh[q] > ph[q] {
                        fill(layer, q, ph[q] + 1, nh[q]);
                    }
                }
            }
            _ => {
                for q in 0..n {
                    was.clear();
                    prev.row_into(q, &mut was);
                    now.clear();
                    next.row_into(q, &mut now);
                    if was != now {
                        difference(&now, &was, |lo, hi| fill(layer, q, lo, hi));
                    }
                }
            }
        }
        prev = next;
        cells = next_cells;
    }
}

/// The runs of `big \ small` (sorted disjoint intervals, `small ⊆ big`), in order.
fn difference(big: &[Span], small: &[Span], mut out: impl FnMut(u32, u32)) {
    let mut j = 0;
    for &[a, b] in big {
        while j < small.len() && small[j][1] < a {
            j += 1;
        }
        let mut cur = a as u64;
        while j < small.len() && small[j][0] <= b {
            if (small[j][0] as u64) > cur {
                out(cur as u32, small[j][0] - 1);
            }
            cur = small[j][1] as u64 + 1;
            j += 1;
        }
        if cur <= b as u64 {
            out(cur as u32, b);
        }
    }
}
