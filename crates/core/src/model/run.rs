//! One model at one context length: the [`ModelSpec`], the documents and the structured reach
//! engine's [`ReachReport`], gathered into the one JSON object that `hasseflow model --json`
//! prints and the app's Models view exports (docs/MODELS.md, "The report").

use serde_json::{Value, json};

use super::MAX_RUN_BYTES;
use super::ModelJob;
use crate::job::Job;
use crate::pattern::{ModelSpec, Overlays, Packing};
use crate::reach::{ReachError, ReachReport, ReachStack};

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
    /// Runs every layer of `spec` at `n` with `overlays`, reporting the rows of `queries`, within
    /// [`MAX_RUN_BYTES`].
    ///
    /// # Errors
    /// [`ReachError`] for an empty model, a query outside `0..n`, documents that do not sum to
    /// `n`, a size the engine cannot hold, or a memory estimate above [`MAX_RUN_BYTES`]
    /// ([`ReachError::OverMemory`]).
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
        ModelRun::compute_with_progress(source, spec, n, overlays, queries, MAX_RUN_BYTES, |_, _| {})
    }

    /// The stack of `spec` at `n` with `overlays`, refused before anything is allocated when a run
    /// reporting `queries` rows would need more than `max_bytes` by its estimate
    /// ([`model_run_bytes`](crate::reach::model_run_bytes)). The one path of the CLI and the app.
    ///
    /// # Errors
    /// [`ReachError::OverMemory`] (one line: the context, the estimate, the limit and the largest
    /// context that fits), or what [`ReachStack::from_model`] refuses.
    ///
    /// # Examples
    /// ```
    /// use hasseflow_core::model::{ModelRun, load_gallery};
    /// use hasseflow_core::pattern::Overlays;
    /// let spec = load_gallery("llama-4-scout-17b-16e").unwrap();
    /// let e = ModelRun::stack(&spec, 4_000_000_000, &Overlays::default(), 0, 8 << 30).unwrap_err();
    /// assert!(e.to_string().starts_with("context 4000000000: the reach run would need about 80.1 GiB"));
    /// assert!(ModelRun::stack(&spec, 1 << 20, &Overlays::default(), 0, 8 << 30).is_ok());
    /// ```
    pub fn stack(
        spec: &ModelSpec,
        n: u64,
        overlays: &Overlays,
        queries: usize,
        max_bytes: u64,
    ) -> Result<ReachStack, ReachError> {
        ReachStack::from_model_within(spec, n, overlays, queries, max_bytes)
    }

    /// [`ModelRun::compute`] within `max_bytes` (refused up front above it, see
    /// [`ModelRun::stack`]), calling `progress(layers_done, depth)` before the first layer and
    /// after each one (the CLI's progress bar): the [`ModelJob`] the app drives in slices, run to
    /// its end.
    ///
    /// # Errors
    /// As [`ModelRun::compute`], with `max_bytes` for [`MAX_RUN_BYTES`].
    pub fn compute_with_progress(
        source: String,
        spec: ModelSpec,
        n: u64,
        overlays: Overlays,
        queries: &[u64],
        max_bytes: u64,
        progress: impl FnMut(usize, usize),
    ) -> Result<ModelRun, ReachError> {
        let stack = ModelRun::stack(&spec, n, &overlays, queries.len(), max_bytes)?;
        ModelJob::new(&stack, source, spec, n, overlays, queries)?.run_observed(progress)
    }

    /// The run of a finished reach report ([`ModelJob`]'s last step): each layer named by the spec,
    /// and, with packed documents, a note on how the model handles them (`packing_note`).
    pub fn from_report(
        source: String,
        mut spec: ModelSpec,
        n: u64,
        overlays: Overlays,
        mut report: ReachReport,
    ) -> ModelRun {
        for (layer, label) in report.layers.iter_mut().zip(spec.layer_labels()) {
            layer.label = label;
        }
        if let Some(note) = image_note(&spec, &overlays) {
            spec.notes.push(note);
        }
        if overlays.docs.len() > 1 {
            spec.notes.push(packing_note(&spec));
        }
        ModelRun { source, spec, n, overlays, report }
    }

    /// The positions a run of `spec` has at `context` tokens, with an encoder-decoder's
    /// encoder given `encoder_context` positions (default: `context`) placed first: the spec to
    /// run and the total. The one rule of the CLI and the app.
    ///
    /// # Errors
    /// A one-line message naming the option: a zero length, an encoder length for a model
    /// without an encoder, or a total that does not fit.
    pub fn positions(
        mut spec: ModelSpec,
        context: u64,
        encoder_context: Option<u64>,
    ) -> Result<(ModelSpec, u64), String> {
        if context == 0 {
            return Err("context: must be at least 1".to_string());
        }
        let n = match spec.encoder.as_mut() {
            Some(e) => {
                let m = encoder_context.unwrap_or(context);
                if m == 0 {
                    return Err("encoder context: must be at least 1".to_string());
                }
                e.context = m;
                m.checked_add(context).ok_or_else(|| "encoder context: too large".to_string())?
            }
            None if encoder_context.is_some() => {
                return Err(format!("encoder context: {} is not an encoder-decoder model", spec.model_type));
            }
            None => context,
        };
        Ok((spec, n))
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
            "layers": s.layer_count(),
            "types": s.layer_labels(),
            "pattern": super::pattern_summary(&s.layers),
            "encoder": s.encoder.as_ref().map(|e| json!({
                "context": e.context,
                "layers": e.layers.len(),
                "pattern": super::pattern_summary(&e.layers),
            })),
            "notes": s.notes,
            "docs": self.overlays.docs,
            "images": self.overlays.images,
            "packing": s.packing.as_str(),
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

/// What a run with image spans should say about them: Transformers 5.24 makes image tokens read
/// each other both ways by Gemma 3's rule (`token_type_ids`) in `gemma3` only (Gemma 4 keeps its
/// full layers causal; other types have no such mask), so for any other type the prediction is
/// Gemma 3's rule, not necessarily the model's.
fn image_note(spec: &ModelSpec, overlays: &Overlays) -> Option<String> {
    if overlays.images.is_empty() || spec.model_type == "gemma3_text" {
        return None;
    }
    Some(format!(
        "image spans are read by Gemma 3's rule (token_type_ids in Transformers 5.24's gemma3); a {} model may \
         not make image tokens read each other both ways",
        spec.model_type
    ))
}

/// What a run with packed documents assumes, in one line: a model that ignores packing reads
/// across the documents at every layer; one that detects it keeps them apart only under the
/// conditions of Transformers' `_preprocess_mask_arguments` (docs/MODELS.md, "Packed documents").
fn packing_note(spec: &ModelSpec) -> String {
    let t = if spec.model_type.is_empty() { "this model" } else { spec.model_type.as_str() };
    match spec.packing {
        // An M-RoPE model's reader note says what it reads packing from (4-row position ids).
        Packing::Ignored => {
            format!("{t} does not detect packed documents given as position ids: every layer reads across them")
        }
        Packing::Unmodelled => format!("{t}: packed documents are not modelled"),
        Packing::Detected => format!(
            "{t} keeps packed documents apart when given them as position ids restarting at 0, with no 2-D \
             attention_mask and no cache (use_cache=False); otherwise every layer reads across them"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::load_gallery;
    use crate::reach::{largest_context_within, model_run_bytes};

    /// Issue 19: contexts from about 1.3·10⁸ to 2³² − 2 aborted on allocation. Now the estimate
    /// refuses them up front, in one line naming the context, the estimate, the limit and the
    /// largest context that fits, before anything of the size of the context is allocated (so
    /// even 2³² − 2 positions, about 86 GiB, is refused at once).
    #[test]
    fn a_context_over_the_memory_limit_is_refused_up_front_with_the_estimate() {
        let spec = load_gallery("llama-4-scout-17b-16e").unwrap_or_else(|e| panic!("{e}"));
        let none = Overlays::default();
        // 150M fits in 8 GiB (about 3 GiB), not in the browser's 1 GiB.
        for (n, limit) in [(150_000_000u64, 1u64 << 30), (1 << 31, MAX_RUN_BYTES), (u32::MAX as u64 - 1, MAX_RUN_BYTES)]
        {
            let e = if limit == MAX_RUN_BYTES {
                ModelRun::compute("g".into(), spec.clone(), n, none.clone(), &[]).expect_err("over the default")
            } else {
                ModelRun::stack(&spec, n, &none, 0, limit).expect_err("over 1 GiB")
            };
            let msg = e.to_string();
            assert!(msg.starts_with(&format!("context {n}: the reach run would need about ")), "{msg}");
            assert!(msg.contains(" GiB (estimate), more than the ") && msg.contains(" GiB limit; "), "{msg}");
            assert!(msg.contains("a context of at most ") && !msg.contains('\n'), "{msg}");
            let ReachError::OverMemory { bytes, max_n: Some(fits), .. } = e else { panic!("{e:?}") };
            assert_eq!(bytes, model_run_bytes(48, n, &none, 0));
            assert_eq!(Some(fits), largest_context_within(48, n, &none, 0, limit));
            assert!(model_run_bytes(48, fits, &none, 0) <= limit && fits < n);
        }
        assert!(ModelRun::stack(&spec, 150_000_000, &none, 0, MAX_RUN_BYTES).is_ok());
        // Past u32 the engine's own refusal comes first.
        let e = ModelRun::compute("g".into(), spec, u32::MAX as u64, Overlays::default(), &[]).expect_err("too large");
        assert!(matches!(e, ReachError::TooLarge { .. }), "{e:?}");
    }

    /// The largest context a limit accepts runs, and one more position is refused: here with a
    /// small limit, so the run is cheap. Documents count: two million one-token documents over 62
    /// layers (each layer keeps the lengths) is refused in the browser's 1 GiB at any context.
    #[test]
    fn the_largest_accepted_context_runs() {
        let spec = load_gallery("gemma-3-27b-it").unwrap_or_else(|e| panic!("{e}"));
        let limit = 12 << 20;
        let fits = largest_context_within(spec.layers.len(), 1 << 30, &Overlays::default(), 1, limit).expect("fits");
        assert!((200_000..1_000_000).contains(&fits), "{fits}");
        let run = ModelRun::compute_with_progress(
            "g".into(),
            spec.clone(),
            fits,
            Overlays::default(),
            &[fits - 1],
            limit,
            |_, _| {},
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(run.report.full_at, Some(6));
        let Err(e) = ModelRun::stack(&spec, fits + 1, &Overlays::default(), 1, limit) else { panic!("one more fits") };
        assert!(matches!(e, ReachError::OverMemory { max_n: Some(m), .. } if m == fits), "{e:?}");
        let docs = Overlays { docs: vec![1; 1 << 21], ..Overlays::default() };
        let Err(e) = ModelRun::stack(&spec, 1 << 21, &docs, 256, 1 << 30) else { panic!("2M documents fit") };
        assert!(
            e.to_string().ends_with("2097152 documents over 62 layers do not fit at any context: use fewer documents"),
            "{e}"
        );
    }

    /// Image spans reach the report: the run's JSON lists them, a Gemma 3 image token reads its
    /// whole image from the first layer on, and a type other than Gemma 3 gets a note.
    #[test]
    fn image_spans_reach_the_report() {
        let spec = load_gallery("gemma-3-27b-it").unwrap_or_else(|e| panic!("{e}"));
        let images = Overlays { images: vec![[100, 256]], ..Overlays::default() };
        let run = ModelRun::compute("g".into(), spec.clone(), 4096, images.clone(), &[100, 99])
            .unwrap_or_else(|e| panic!("{e}"));
        let v = run.to_json();
        assert_eq!(v["images"], json!([[100, 256]]));
        assert_eq!(v["rows"]["100"][0], json!([[0, 355]]));
        assert_eq!(v["rows"]["99"][0], json!([[0, 99]]));
        assert!(run.spec.notes.iter().all(|n| !n.contains("image spans")), "{:?}", run.spec.notes);
        let plain =
            ModelRun::compute("g".into(), spec, 4096, Overlays::default(), &[100]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plain.to_json()["rows"]["100"][0], json!([[0, 100]]));
        assert_eq!(plain.to_json()["images"], json!([]));
        let mistral = load_gallery("mistral-7b-v0.1").unwrap_or_else(|e| panic!("{e}"));
        let run = ModelRun::compute("g".into(), mistral, 4096, images, &[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(run.spec.notes.iter().any(|n| n.contains("a mistral model may not")), "{:?}", run.spec.notes);
    }

    /// The progress callback sees every layer count from 0 to the depth, in order, and the run it
    /// reports on equals the one without a callback.
    #[test]
    fn progress_reports_each_layer_once() {
        let spec = load_gallery("gemma-3-27b-it").unwrap_or_else(|e| panic!("{e}"));
        let depth = spec.layers.len();
        let mut seen = Vec::new();
        let with = ModelRun::compute_with_progress(
            "g".into(),
            spec.clone(),
            4096,
            Overlays::default(),
            &[4095],
            MAX_RUN_BYTES,
            |done, d| {
                assert_eq!(d, depth);
                seen.push(done);
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(seen, (0..=depth).collect::<Vec<_>>());
        let without =
            ModelRun::compute("g".into(), spec, 4096, Overlays::default(), &[4095]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(with, without);
    }
}
