//! A model at a small context: windows, chunk sizes and document lengths divided by the same
//! factor as the context, so the scaled copy has the same shape of reach (the same number of
//! layers to cover a document, the same layer at which everything is reached, up to rounding)
//! while it is small enough for the dense tools (the editor's grid, `Analysis`, the flow model).

use thiserror::Error;

use crate::pattern::{LayerKind, ModelSpec};

/// Why a model cannot be scaled down.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ScaleError {
    /// A target size of 0, or a context of 0.
    #[error("scale: the context and the target size must be at least 1")]
    Empty,
    /// More documents than positions in the scaled context.
    #[error("scale: {docs} documents do not fit in {n} positions; scale less or pack fewer documents")]
    TooManyDocuments {
        /// Number of documents.
        docs: usize,
        /// The scaled context.
        n: u64,
    },
}

pub use crate::pattern::scale_length;

/// A model scaled to at most `max_n` positions: what [`scale_model`] returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScaledModel {
    /// Every length was divided by this (1: nothing to scale).
    pub factor: u64,
    /// The scaled context.
    pub n: u64,
    /// The scaled model.
    pub spec: ModelSpec,
    /// The scaled document lengths (empty: one document), summing to `n`.
    pub docs: Vec<u64>,
    /// What changed, in words: `scaled 1:256: context 131072 → 512, window 4096 → 16`.
    pub summary: String,
}

/// Scales `spec` at context `n` with documents `docs` down to at most `max_n` positions: the
/// factor is `⌈n / max_n⌉`, the context `n / factor` rounded, windows and chunk sizes by
/// [`ModelSpec::scaled`], document lengths rounded (at least 1) with the largest one adjusted so
/// that they still sum to the scaled context.
///
/// # Errors
/// [`ScaleError`] for an empty context or target, or more documents than scaled positions.
///
/// # Examples
/// ```
/// use hasseflow_core::model::{load_gallery, scale_model};
/// let s = scale_model(&load_gallery("mistral-7b-v0.1").unwrap(), 131072, &[], 512).unwrap();
/// assert_eq!((s.factor, s.n), (256, 512));
/// assert_eq!(s.summary, "scaled 1:256: context 131072 → 512, window 4096 → 16");
/// ```
pub fn scale_model(spec: &ModelSpec, n: u64, docs: &[u64], max_n: u64) -> Result<ScaledModel, ScaleError> {
    if n == 0 || max_n == 0 {
        return Err(ScaleError::Empty);
    }
    let factor = n.div_ceil(max_n);
    let small_n = scale_length(n, factor).min(max_n);
    let mut small_docs: Vec<u64> = docs.iter().map(|&d| scale_length(d, factor)).collect();
    if small_docs.len() as u64 > small_n {
        return Err(ScaleError::TooManyDocuments { docs: small_docs.len(), n: small_n });
    }
    // Rounding can miss the sum: take the difference from the largest documents, one at a time.
    let mut sum: u64 = small_docs.iter().sum();
    while !small_docs.is_empty() && sum != small_n {
        let i = (0..small_docs.len()).max_by_key(|&i| (small_docs[i], std::cmp::Reverse(i))).unwrap_or(0);
        if sum > small_n {
            let take = (sum - small_n).min(small_docs[i] - 1);
            if take == 0 {
                // Every document has length 1 and there are no more of them than positions.
                break;
            }
            small_docs[i] -= take;
            sum -= take;
        } else {
            small_docs[i] += small_n - sum;
            sum = small_n;
        }
    }
    let mut scaled = spec.scaled(factor);
    if let Some(e) = scaled.encoder.as_mut()
        && e.context > 0
    {
        // The encoder's positions stay inside the scaled context, with one decoder position at least.
        e.context = e.context.min(small_n.saturating_sub(1)).max(1);
    }
    let mut changes = vec![format!("context {n} → {small_n}")];
    let mut seen: Vec<(LayerKind, LayerKind)> = Vec::new();
    for (a, b) in spec.layers.iter().zip(&scaled.layers) {
        if a != b && !seen.contains(&(*a, *b)) {
            seen.push((*a, *b));
            changes.push(match (a, b) {
                (LayerKind::Sliding { window: x }, LayerKind::Sliding { window: y }) => format!("window {x} → {y}"),
                (LayerKind::Chunked { size: x }, LayerKind::Chunked { size: y }) => format!("chunk {x} → {y}"),
                _ => format!("{} → {}", a.label(), b.label()),
            });
        }
    }
    if !docs.is_empty() {
        changes.push(format!("{} documents", docs.len()));
    }
    let summary = if factor > 1 {
        format!("scaled 1:{factor}: {}", changes.join(", "))
    } else {
        format!("not scaled (n = {n} ≤ {max_n})")
    };
    Ok(ScaledModel { factor, n: small_n, spec: scaled, docs: small_docs, summary })
}

/// Image spans `[start, length]` of a context scaled by `factor` to `n` positions: each span
/// covers the scaled positions its tokens fall in (`start / factor` up to `⌈end / factor⌉`, at
/// least one, inside `0..n`), and spans that come to share or touch positions are merged (as
/// Transformers reads touching image tokens: one image).
///
/// # Examples
/// ```
/// use hasseflow_core::model::scale_image_spans;
/// // 10..40 → 1..4 and 45..47 → 4..5 touch: one image; 200 falls past the end, on the last position.
/// assert_eq!(scale_image_spans(&[[10, 30], [45, 2], [200, 1]], 10, 20), vec![[1, 4], [19, 1]]);
/// ```
pub fn scale_image_spans(images: &[[u64; 2]], factor: u64, n: u64) -> Vec<[u64; 2]> {
    let f = factor.max(1);
    let mut out: Vec<[u64; 2]> = Vec::with_capacity(images.len());
    let mut ranges: Vec<(u64, u64)> = images
        .iter()
        .filter(|_| n > 0)
        .map(|&[s, l]| {
            let lo = (s / f).min(n - 1);
            let hi = s.saturating_add(l).div_ceil(f).clamp(lo + 1, n);
            (lo, hi)
        })
        .collect();
    ranges.sort_unstable();
    for (lo, hi) in ranges {
        match out.last_mut() {
            Some(last) if lo <= last[0] + last[1] => last[1] = last[1].max(hi - last[0]),
            _ => out.push([lo, hi - lo]),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::load_gallery;

    #[test]
    fn lengths_round_and_stay_positive() {
        assert_eq!(scale_length(4096, 256), 16);
        assert_eq!(scale_length(1024, 256), 4);
        assert_eq!(scale_length(128, 256), 1); // halves round up
        assert_eq!(scale_length(127, 256), 1); // at least 1
        assert_eq!(scale_length(8192, 2048), 4);
        assert_eq!(scale_length(2047, 256), 8);
        assert_eq!(scale_length(7, 1), 7);
    }

    #[test]
    fn gallery_models_scale_to_at_most_512() {
        for e in crate::model::gallery() {
            let spec = load_gallery(e.name).unwrap();
            for n in [1u64, 100, 512, 513, 4096, 100_000, 131_072, 1 << 20] {
                let s = scale_model(&spec, n, &[], 512).unwrap();
                assert!(s.n >= 1 && s.n <= 512, "{} at {n}: {}", e.name, s.n);
                assert_eq!(s.spec.layers.len(), spec.layers.len());
                assert_eq!(s.factor == 1, n <= 512);
            }
        }
        let s = scale_model(&load_gallery("llama-4-scout-17b-16e").unwrap(), 1 << 20, &[], 512).unwrap();
        assert_eq!((s.factor, s.n), (2048, 512));
        assert_eq!(s.spec.layers[0], LayerKind::Chunked { size: 4 });
        assert_eq!(s.summary, "scaled 1:2048: context 1048576 → 512, chunk 8192 → 4");
    }

    #[test]
    fn documents_keep_their_sum() {
        let spec = load_gallery("llama-3.1-8b").unwrap();
        let s = scale_model(&spec, 131072, &[1000, 30072, 100000], 512).unwrap();
        assert_eq!(s.docs.iter().sum::<u64>(), s.n);
        assert_eq!(s.docs.len(), 3);
        assert!(s.docs.iter().all(|&d| d >= 1));
        // Many tiny documents: each keeps at least one position.
        let s = scale_model(&spec, 1024, &vec![2; 512], 512).unwrap();
        assert_eq!(s.docs, vec![1; 512]);
        assert_eq!(
            scale_model(&spec, 2048, &vec![2; 1024], 512),
            Err(ScaleError::TooManyDocuments { docs: 1024, n: 512 })
        );
        assert_eq!(scale_model(&spec, 0, &[], 512), Err(ScaleError::Empty));
    }

    #[test]
    fn the_scaled_copy_reaches_everything_at_the_same_layer() {
        // Mistral 7B at 16384: window 4096 reaches everything at layer 5; 1:32 gives window 128
        // at 512, also layer 5.
        use crate::pattern::Overlays;
        use crate::reach::{ReachOptions, ReachStack};
        let spec = load_gallery("mistral-7b-v0.1").unwrap();
        let s = scale_model(&spec, 16384, &[], 512).unwrap();
        let big = ReachStack::from_model(&spec, 16384, &Overlays::default()).unwrap();
        let small = ReachStack::from_model(&s.spec, s.n, &Overlays::default()).unwrap();
        let o = ReachOptions::default();
        assert_eq!(big.run(&o).unwrap().full_at, small.run(&o).unwrap().full_at);
        assert_eq!(small.to_layer_stack().unwrap().layers().len(), 32);
    }
}
