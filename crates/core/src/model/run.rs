//! One model at one context length: the [`ModelSpec`], the documents and the structured reach
//! engine's [`ReachReport`], gathered into the one JSON object that `hasseflow model --json`
//! prints and the app's Models view exports (docs/MODELS.md, "The report").

use serde_json::{Value, json};

use crate::pattern::{ModelSpec, Overlays};
use crate::reach::{ReachError, ReachJob, ReachOptions, ReachReport, ReachStack};

/// A model run: what was asked and what the engine found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelRun {
    /// Where the config came from (a gallery source URL or a file name).
    pub source: String,
    /// The model.
    pub spec: ModelSpec,
    /// Context length.
    pub n: u64,
    /// Packed documents and other overlays, applied to every layer.
    pub overlays: Overlays,
    /// The engine's report.
    pub report: ReachReport,
}

impl ModelRun {
    /// Runs every layer of `spec` at `n` with `overlays`, reporting the rows of `queries`.
    ///
    /// # Errors
    /// [`ReachError`] for an empty model, a query outside `0..n`, documents that do not sum to
    /// `n`, or a size the engine cannot hold.
    ///
    /// # Examples
    /// ```
    /// use hasseflow_core::model::{ModelRun, load_gallery};
    /// use hasseflow_core::pattern::Overlays;
    /// let spec = load_gallery("mistral-7b-v0.1").unwrap();
    /// let run = ModelRun::compute("gallery".into(), spec, 16384, Overlays::default(), &[16383]).unwrap();
    /// // Window 4096 over 32 layers: 32 · 4095 positions back, more than the context.
    /// assert_eq!(run.report.full_at, Some(5));
    /// assert_eq!(run.to_json()["rows"]["16383"][0], serde_json::json!([[12288, 16383]]));
    /// ```
    pub fn compute(
        source: String,
        spec: ModelSpec,
        n: u64,
        overlays: Overlays,
        queries: &[u64],
    ) -> Result<ModelRun, ReachError> {
        ModelRun::compute_with_progress(source, spec, n, overlays, queries, |_, _| {})
    }

    /// [`ModelRun::compute`], calling `progress(layers_done, depth)` before the first layer and
    /// after each one (the CLI's progress bar). The same [`ReachJob`] the app drives in slices.
    ///
    /// # Errors
    /// As [`ModelRun::compute`].
    pub fn compute_with_progress(
        source: String,
        spec: ModelSpec,
        n: u64,
        overlays: Overlays,
        queries: &[u64],
        mut progress: impl FnMut(usize, usize),
    ) -> Result<ModelRun, ReachError> {
        let stack = ReachStack::from_model(&spec, n, &overlays)?;
        let mut job = ReachJob::new(&stack, ReachOptions { queries: queries.to_vec(), ..ReachOptions::default() })?;
        let mut reported = usize::MAX;
        while !job.is_done() {
            if job.layers_done() != reported {
                reported = job.layers_done();
                progress(reported, job.depth());
            }
            job.step()?;
        }
        let report = job.finish()?;
        Ok(ModelRun { source, spec, n, overlays, report })
    }

    /// Whether any layer's reach crosses a document boundary.
    pub fn leaks(&self) -> bool {
        self.report.layers.iter().any(|l| l.leaks)
    }

    /// The verdict in words: "everything reached at layer X of Y" or how far short it falls.
    pub fn verdict(&self) -> String {
        let depth = self.report.depth;
        match self.report.full_at {
            Some(0) => format!("every position reaches all it ever can from the start (L = 0 of {depth})"),
            Some(x) => format!("everything the stack can reach is reached at layer {x} of {depth}"),
            None => format!(
                "{} of {} positions short at the last layer ({} cells missing)",
                self.report.shortfall.queries, self.n, self.report.shortfall.cells
            ),
        }
    }

    /// The JSON object of `hasseflow model --json` (without timings, which the caller adds).
    pub fn to_json(&self) -> Value {
        let s = &self.spec;
        let r = &self.report;
        let mut rows = serde_json::Map::new();
        for (i, q) in r.layers.first().map(|l| l.query_rows.as_slice()).unwrap_or_default().iter().enumerate() {
            let per_layer: Vec<Value> = r.layers.iter().map(|l| json!(l.query_rows[i].intervals)).collect();
            rows.insert(q.query.to_string(), Value::Array(per_layer));
        }
        let limit = r.limit_cells.max(1) as f64;
        json!({
            "name": s.name,
            "model_type": s.model_type,
            "source": self.source,
            "causal": s.causal,
            "n": self.n,
            "max_position_embeddings": s.max_position_embeddings,
            "layers": s.layers.len(),
            "types": s.layers.iter().map(|k| k.label()).collect::<Vec<_>>(),
            "pattern": super::pattern_summary(&s.layers),
            "docs": self.overlays.docs,
            "growth": r.growth,
            "full_at": r.full_at,
            "shortfall": if r.full_at.is_some() { Value::Null } else { json!(r.shortfall) },
            "limit_cells": r.limit_cells,
            "leaks": self.leaks(),
            "verdict": self.verdict(),
            "per_layer": r.layers.iter().map(|l| json!({
                "layer": l.layer,
                "type": l.label,
                "cells": l.cells,
                "coverage": l.cells as f64 / limit,
                "lookback": l.lookback,
                "leaks": l.leaks,
                "leaking_queries": l.leaking_queries,
                "queries_short": l.queries_short,
            })).collect::<Vec<_>>(),
            "rows": rows,
            "limit": r.limit,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::load_gallery;

    /// The progress callback sees every layer count from 0 to the depth, in order, and the run it
    /// reports on equals the one without a callback.
    #[test]
    fn progress_reports_each_layer_once() {
        let spec = load_gallery("gemma-3-27b-it").unwrap_or_else(|e| panic!("{e}"));
        let depth = spec.layers.len();
        let mut seen = Vec::new();
        let with =
            ModelRun::compute_with_progress("g".into(), spec.clone(), 4096, Overlays::default(), &[4095], |done, d| {
                assert_eq!(d, depth);
                seen.push(done);
            })
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(seen, (0..=depth).collect::<Vec<_>>());
        let without =
            ModelRun::compute("g".into(), spec, 4096, Overlays::default(), &[4095]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(with, without);
    }
}
