//! The analysis reports as JSON: the one schema of `hasseflow analyze --json` and of the Python
//! package's results. A dense mask gets [`analysis_json`] (plus [`stack_json`] for a layer stack);
//! interval rows on the structured engine get [`structured_json`], at the depth [`reach_auto`]
//! chooses.

use serde_json::{Value, json};

use crate::format::MaskFile;
use crate::interop::MaskModReport;
use crate::reach::{IntervalRows, ReachError, ReachOptions, ReachReport, ReachStack, StructuredLayer};
use crate::{Analysis, FirstReach, LayerStack, StackMode};

/// Deepest stack [`reach_auto`] tries when no depth is given.
pub const MAX_AUTO_LAYERS: usize = 64;

/// The dense report. Fields: n, entries, density, depth, dense, limit (row strings, left out
/// with `with_limit = false`), classes, hasse_edges, height, width, growth, labels (when the file
/// has them), first_reach (on request).
pub fn analysis_json(file: &MaskFile, a: &Analysis, first_reach: Option<&FirstReach>, with_limit: bool) -> Value {
    let mask = &file.mask;
    let mut v = json!({
        "n": a.n(),
        "entries": mask.count_ones(),
        "density": mask.density(),
        "depth": a.depth(),
        "dense": a.is_dense(),
        "classes": a.classes(),
        "hasse_edges": a.hasse_edges().iter().map(|&(x, y)| [x, y]).collect::<Vec<_>>(),
        "height": a.height(),
        "width": a.width(),
        "growth": a.growth(),
    });
    if with_limit {
        v["limit"] = json!(a.closure().to_row_strings());
    }
    if let Some(labels) = &file.labels {
        v["labels"] = json!(labels);
    }
    if let Some(d) = first_reach {
        v["first_reach"] = json!((0..d.n()).map(|q| d.row(q).collect::<Vec<_>>()).collect::<Vec<_>>());
    }
    if let Some((stack, mode)) = &file.stack {
        v["stack"] = stack_json(stack, *mode, with_limit);
    }
    v
}

/// The stack part of the report: mode, layer and head counts, depth, growth, limit rows (with
/// `with_limit`).
pub fn stack_json(stack: &LayerStack, mode: StackMode, with_limit: bool) -> Value {
    let s = stack.analyze(mode);
    let mut v = json!({
        "mode": match mode { StackMode::Once => "once", StackMode::Repeat => "repeat" },
        "layers": stack.layers().len(),
        "heads": stack.layers().iter().map(|l| l.heads.len()).collect::<Vec<_>>(),
        "depth": s.depth,
        "growth": s.growth,
    });
    if with_limit {
        v["limit"] = json!(s.limit.to_row_strings());
    }
    v
}

/// The structured engine's report: `engine`, `depth` (`L*`, null when the stack never reaches
/// the limit), `reach` (the [`ReachReport`]) and, for a mask_mod, what its text did
/// (`mask_mod`: name, b, h, which of them it reads, skipped lines).
pub fn structured_json(report: &ReachReport, mask_mod: Option<(&MaskModReport, u64, u64)>) -> Value {
    let mut v = json!({
        "engine": "structured",
        "depth": report.full_at,
        "reach": serde_json::to_value(report).unwrap_or(Value::Null),
    });
    if let Some((rep, b, h)) = mask_mod {
        v["mask_mod"] = json!({
            "name": rep.name, "batch": b, "head": h, "uses_batch": rep.uses_batch, "uses_head": rep.uses_head,
            "skipped": rep.skipped.iter().map(|(l, c, w)| json!({"line": l, "column": c, "why": w})).collect::<Vec<_>>(),
        });
    }
    v
}

/// The reach of `layers` copies of one mask given as interval rows, on the structured engine;
/// without `layers`, the depth doubles from 8 up to [`MAX_AUTO_LAYERS`] until `R(L)` reaches the
/// limit (`full_at` is then `L*`). `documents` are the lengths of the leak check (empty: one).
///
/// # Errors
/// `layers` outside `1..=16 · MAX_AUTO_LAYERS` ([`ReachError::Layers`]), or the engine's refusals.
pub fn reach_auto(rows: &IntervalRows, layers: Option<usize>, documents: &[u64]) -> Result<ReachReport, ReachError> {
    let n = rows.n() as u64;
    let run = |l: usize| {
        ReachStack::new(n, vec![StructuredLayer::Intervals(rows.clone()); l], documents.to_vec())?
            .run(&ReachOptions::default())
    };
    if let Some(l) = layers {
        if l == 0 || l > MAX_AUTO_LAYERS * 16 {
            return Err(ReachError::Layers { layers: l, max: MAX_AUTO_LAYERS * 16 });
        }
        return run(l);
    }
    let mut l = 8;
    loop {
        let r = run(l)?;
        if r.full_at.is_some() || l >= MAX_AUTO_LAYERS {
            return Ok(r);
        }
        l *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BitMatrix;

    #[test]
    fn reach_auto_doubles_until_the_limit_and_agrees_with_the_dense_depth() {
        // A window of 4 over 40 positions: L* = 13 (39 / 3 rounded up), found at 16 layers.
        let m = BitMatrix::from_fn(40, |q, k| k <= q && q - k < 4);
        let rows = IntervalRows::from_bitmatrix(&m.with_diagonal(), 8).expect("intervals");
        let r = reach_auto(&rows, None, &[]).expect("runs");
        assert_eq!(r.depth, 16);
        assert_eq!(r.full_at, Some(Analysis::new(&m).depth()));
        let short = reach_auto(&rows, Some(3), &[]).expect("runs");
        assert_eq!((short.depth, short.full_at), (3, None));
        assert!(reach_auto(&rows, Some(0), &[]).unwrap_err().to_string().contains("layers = 0"));
    }

    #[test]
    fn the_report_leaves_the_limit_out_on_request() {
        let file = MaskFile::new(BitMatrix::from_fn(5, |q, k| k <= q));
        let a = Analysis::new(&file.mask);
        assert_eq!(analysis_json(&file, &a, None, true)["limit"][4], "11111");
        assert!(analysis_json(&file, &a, None, false).get("limit").is_none());
        assert_eq!(analysis_json(&file, &a, None, false)["depth"], 1);
    }
}
