//! How much memory a model run holds at once, worked out before anything is allocated, so that a
//! context too long for the machine is refused with a message instead of aborting on allocation
//! (issue 19: `hasseflow model` aborted for contexts from about 1.3·10⁸ up to 2³² − 2).
//!
//! [`model_run_bytes`] is an upper bound on the heap that [`ReachStack::from_model`] and a
//! [`ReachJob`](super::ReachJob) driven to its end hold at the same time, from the shapes alone:
//!
//! - **rows**. A model's layers with packed documents only (what the CLI and the app run) keep
//!   every row one interval with non-decreasing ends: the limit and the current `R(l)` are two
//!   `u32` pairs per position (16 B), the layer steps in place, and the lookback median may keep
//!   one `u32` per position plus its runs (at most `n / 16 + 17` runs of 12 B, twice that while
//!   they move to a larger allocation; the runs of the rows frozen at their limit, at most
//!   `n / 1024 + 16`, fit in that second half): about 21.5 B per position. The limit phase (the union and one closure step, 16 B) and the
//!   structure phase (the limit, then 8 B of classes or components) stay below that.
//! - **image spans** keep every row one interval, but the layer no longer steps in place: the
//!   step writes into a third pair of rows (8 B per position more), and every layer keeps its
//!   copy of the spans (16 B each) besides one shared set of ranges.
//! - **general rows** (sinks, a prefix or global tokens): three CSR row sets and the segment
//!   tree, each bounded by [`MAX_SPANS`] intervals (the engine refuses more), capacity doubled.
//! - **documents**: `from_model` clones the overlays into every layer (8 B per document and
//!   layer); the rule contexts share one set of ranges; the stack, the caller and the run keep a
//!   few more.
//! - **reports**: per layer a few hundred bytes, plus the reported rows of the queries.
//!
//! The figures measured with `/usr/bin/time -v` are in docs/MODELS.md ("Memory").

use super::{MAX_SPANS, ModelSpec, Overlays, ReachError};

/// Bytes besides the rows, documents and reports: the program's own heap, the compressed Hasse
/// diagram (at most [`DEFAULT_MAX_HASSE_NODES`](super::DEFAULT_MAX_HASSE_NODES) nodes), the
/// report's JSON.
const FIXED_BYTES: u128 = 4 << 20;

/// Bytes kept per layer: its report, label, rule context and overlays (without the documents).
const PER_LAYER_BYTES: u128 = 512;

/// An upper bound on the bytes a run of a model with `layers` layers at context `n` with
/// `overlays`, reporting the rows of `queries` positions, holds at once (see the module docs).
/// Pure arithmetic: nothing is allocated; saturates at `u64::MAX`.
///
/// # Examples
/// ```
/// use hasseflow_engine::pattern::Overlays;
/// use hasseflow_engine::reach::model_run_bytes;
/// // About 21.5 bytes per position for a model with packed documents only.
/// let bytes = model_run_bytes(48, 100_000_000, &Overlays::default(), 0);
/// assert!(bytes > 2_000_000_000 && bytes < 2_300_000_000);
/// ```
pub fn model_run_bytes(layers: usize, n: u64, overlays: &Overlays, queries: usize) -> u64 {
    // Clamped far above anything that runs, so that no product below overflows a u128.
    let cap = |x: u128| x.min(1 << 40);
    let (n, layers, queries) = (cap(n as u128), cap(layers as u128), cap(queries as u128));
    let word = std::mem::size_of::<usize>() as u128;
    let docs = cap(overlays.docs.len().max(1) as u128);
    let globals = cap(overlays.globals.len() as u128);
    let simple = overlays.sinks == 0 && overlays.prefix == 0 && overlays.globals.is_empty();
    // The lookbacks: one u32 per position, and the runs before they turn plain (twice while
    // they move; the values and the runs at once are 4n + 12 (n / 16 + 17) at most, so the
    // other half also holds the runs of the rows frozen at their limit, `engine::stats::Frozen`:
    // at most n / 1024 + 16 of 12 B).
    let lookbacks = 4 * n + 2 * 12 * (n / 16 + 17);
    // Most intervals in one row.
    let per_row = n / 2 + 1;
    let images = cap(overlays.images.len() as u128);
    let (rows, row_intervals) = if simple {
        (if images > 0 { 24 } else { 16 } * n + lookbacks, 1)
    } else {
        let spans = (MAX_SPANS as u128 + per_row).min(n * per_row);
        let csr = (n + 1) * word + 2 * 8 * spans;
        let tree = 2 * n.next_power_of_two() * 2 * word + 2 * 8 * 2 * spans;
        (3 * csr + 8 * n + tree + lookbacks, per_row)
    };
    // Per layer and a few more copies, and the frozen prefix per document (4 B).
    let documents = (layers + 6) * docs * 8 + docs * 4 + layers * globals * 12 + (layers + 6) * images * 16;
    let reports = layers * (PER_LAYER_BYTES + 8 + queries * (40 + 16 * row_intervals));
    let total = FIXED_BYTES + rows + documents + reports;
    total.min(u64::MAX as u128) as u64
}

/// An encoder-decoder's run (`ReachStack::from_model` with an encoder): every decoder layer holds
/// its interval rows (one or two intervals per position), every reach row stays within three
/// intervals (the encoder's, the decoder's window, the diagonal), so the general path's CSR rows and
/// segment tree hold `3 n` intervals, not [`MAX_SPANS`].
fn encoder_decoder_bytes(decoder_layers: usize, layers: usize, n: u64, queries: usize) -> u64 {
    let cap = |x: u128| x.min(1 << 40);
    let (n, layers, dec, queries) =
        (cap(n as u128), cap(layers as u128), cap(decoder_layers as u128), cap(queries as u128));
    let word = std::mem::size_of::<usize>() as u128;
    let spans = 3 * n;
    let csr = (n + 1) * word + 2 * 8 * spans;
    let tree = 2 * n.next_power_of_two() * 2 * word + 2 * 8 * 2 * spans;
    let layer_rows = dec * ((n + 1) * word + 2 * 8 * 2 * n);
    let documents = 2 * (layers + 6) * n * 8;
    let reports = layers * (PER_LAYER_BYTES + 8 + queries * (40 + 16 * 3));
    let total = FIXED_BYTES + 3 * csr + 8 * n + tree + layer_rows + documents + reports;
    total.min(u64::MAX as u128) as u64
}

/// The largest context at most `n` whose run fits in `max_bytes`, with the same layers,
/// documents, overlays and queries ([`model_run_bytes`] grows with the context); `None` when
/// not even one position fits.
pub fn largest_context_within(
    layers: usize,
    n: u64,
    overlays: &Overlays,
    queries: usize,
    max_bytes: u64,
) -> Option<u64> {
    largest_within(n, |m| model_run_bytes(layers, m, overlays, queries) <= max_bytes)
}

/// The largest `m` in `1..=n` with `fits(m)`, for a `fits` that holds up to some point.
fn largest_within(n: u64, fits: impl Fn(u64) -> bool) -> Option<u64> {
    if !fits(1) {
        return None;
    }
    let (mut lo, mut hi) = (1u64, n.max(1));
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) { lo = mid } else { hi = mid - 1 }
    }
    Some(lo)
}

/// Checks, before anything is allocated, that a run of `spec` at `n` with `overlays` and `queries`
/// reported rows fits in `max_bytes`; returns the estimate.
///
/// # Errors
/// [`ReachError::TooLarge`] for `n >= 2^32 - 1`, [`ReachError::OverMemory`] (the estimate, the
/// limit and the largest context that fits) when the estimate is above `max_bytes`.
pub fn check_model_run(
    spec: &ModelSpec,
    n: u64,
    overlays: &Overlays,
    queries: usize,
    max_bytes: u64,
) -> Result<u64, ReachError> {
    super::check_n(n)?;
    let layers = spec.layer_count();
    let bytes = match &spec.encoder {
        Some(_) => encoder_decoder_bytes(spec.layers.len(), layers, n, queries),
        None => model_run_bytes(layers, n, overlays, queries),
    };
    if bytes > max_bytes {
        return Err(ReachError::OverMemory {
            n,
            bytes,
            limit: max_bytes,
            max_n: match &spec.encoder {
                Some(_) => {
                    largest_within(n, |m| encoder_decoder_bytes(spec.layers.len(), layers, m, queries) <= max_bytes)
                }
                None => largest_context_within(layers, n, overlays, queries, max_bytes),
            },
            docs: overlays.docs.len() as u64,
            layers,
        });
    }
    Ok(bytes)
}

/// Bytes in words, e.g. `8.0 GiB`, `512.0 MiB`, `300 bytes`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::LayerKind;

    #[test]
    fn the_estimate_grows_with_the_context_and_the_documents() {
        let o = Overlays::default();
        let small = model_run_bytes(48, 1 << 20, &o, 256);
        let big = model_run_bytes(48, 1 << 30, &o, 256);
        assert!(big > 1000 * (small - (FIXED_BYTES as u64)) / 2, "{small} {big}");
        let docs = Overlays { docs: vec![1; 1 << 20], ..Overlays::default() };
        assert!(model_run_bytes(48, 1 << 20, &docs, 0) > model_run_bytes(48, 1 << 20, &o, 0) + 48 * 8 * (1 << 20));
        let images = Overlays { images: vec![[0, 4]], ..Overlays::default() };
        assert_eq!(
            model_run_bytes(48, 1 << 20, &images, 0),
            model_run_bytes(48, 1 << 20, &o, 0) + 8 * (1 << 20) + 54 * 16
        );
        let sinks = Overlays { sinks: 4, ..Overlays::default() };
        assert!(model_run_bytes(48, 1 << 20, &sinks, 0) > model_run_bytes(48, 1 << 20, &o, 0));
        assert_eq!(model_run_bytes(usize::MAX, u64::MAX, &sinks, usize::MAX), u64::MAX);
    }

    #[test]
    fn the_largest_context_is_the_last_that_fits() {
        let o = Overlays::default();
        let limit = 1 << 30;
        let m = largest_context_within(48, u32::MAX as u64 - 2, &o, 0, limit).expect("some context fits");
        assert!(model_run_bytes(48, m, &o, 0) <= limit && model_run_bytes(48, m + 1, &o, 0) > limit);
        assert_eq!(largest_context_within(48, 1000, &o, 0, limit), Some(1000));
        assert_eq!(largest_context_within(48, 1000, &o, 0, 1000), None);
        let spec = ModelSpec {
            name: "t".into(),
            model_type: "t".into(),
            causal: true,
            layers: vec![LayerKind::Full; 48],
            max_position_embeddings: None,
            encoder: None,
            notes: Vec::new(),
            packing: Default::default(),
        };
        assert_eq!(check_model_run(&spec, m, &o, 0, limit), Ok(model_run_bytes(48, m, &o, 0)));
        let e = check_model_run(&spec, m + 1, &o, 0, limit).expect_err("over");
        assert!(matches!(e, ReachError::OverMemory { max_n: Some(x), .. } if x == m), "{e:?}");
        assert!(matches!(check_model_run(&spec, u32::MAX as u64, &o, 0, u64::MAX), Err(ReachError::TooLarge { .. })));
    }

    #[test]
    fn bytes_read_as_words() {
        assert_eq!(human_bytes(300), "300 bytes");
        assert_eq!(human_bytes(8 << 30), "8.0 GiB");
        assert_eq!(human_bytes(1536 << 20), "1.5 GiB");
        assert_eq!(human_bytes(u64::MAX), "16384.0 PiB");
    }
}
