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

/// The closure of `c` (which contains the diagonal) by repeated squaring `C ← C · C`.
pub(super) fn close(mut c: Rows) -> Result<Rows, ReachError> {
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
/// `max_row_intervals` intervals, or the general path would be too large.
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
