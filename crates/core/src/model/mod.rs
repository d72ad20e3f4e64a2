//! Real models' attention read from a Hugging Face `config.json` (docs/MODELS.md).
//!
//! [`parse_config`] turns the text of a config, written with Transformers' current conventions
//! (`layer_types`) or older ones (`sliding_window`, `sliding_window_pattern`,
//! `use_sliding_window` + `max_window_layers`, `attention_chunk_size`, `local_attention`,
//! `attention_window`, ...), into a [`ModelSpec`]: one [`LayerKind`] per layer, derived exactly
//! as the config class of Transformers 5.24 for that `model_type` derives its `layer_types`
//! (tests/python/gen_model_expectations.py checks every gallery entry and a set of synthetic
//! configs against the live library). Anything it cannot map exactly is refused with a
//! [`ModelError`] whose one-line message names the field.
//!
//! [`ModelRun`] runs a model at a context length through the structured reach engine
//! ([`crate::reach`]) and gives the JSON report; [`ModelRun::stack`] refuses, before anything is
//! allocated, a run whose memory estimate is above a limit ([`MAX_RUN_BYTES`]).
//!
//! [`gallery`] lists real architectures with their published parameters; [`packing`] reads
//! document lengths and segment ids for [`Overlays::docs`](crate::pattern::Overlays), [`images`]
//! image spans for [`Overlays::images`](crate::pattern::Overlays).
//!
//! [`LayerKind`]: crate::pattern::LayerKind
//! [`ModelSpec`]: crate::pattern::ModelSpec

#[cfg(feature = "model-reader")]
mod config;
pub mod gallery;
pub mod images;
mod job;
pub mod packing;
mod run;
pub mod scale;
#[cfg(feature = "model-reader")]
#[rustfmt::skip]
mod types;
#[cfg(feature = "model-reader")]
mod types_def;
pub mod wire;

use thiserror::Error;

use crate::pattern::{LayerKind, ModelSpec};

#[cfg(feature = "model-reader")]
pub use config::SUPPORTED_MODEL_TYPES;
pub use gallery::{GALLERY, GalleryEntry, gallery, gallery_entry};
#[cfg(feature = "model-reader")]
pub use gallery::{gallery_json, load_gallery};
pub use images::{ImageError, check_image_spans, image_spans_text, parse_image_spans};
pub use job::ModelJob;
pub use packing::{PackingError, parse_doc_lengths, parse_segment_ids, segments_to_docs};
pub use run::ModelRun;
pub use scale::{ScaleError, ScaledModel, scale_image_spans, scale_length, scale_model};

/// Most bytes of a `config.json` (real ones are a few kilobytes).
pub const MAX_CONFIG_BYTES: usize = 1 << 20;

/// Most layers a config may declare.
pub const MAX_LAYERS: u64 = 4096;

/// Most bytes a model run may need by its estimate ([`crate::reach::model_run_bytes`]) before it
/// is refused, up front, with [`ReachError::OverMemory`](crate::reach::ReachError): 8 GiB natively
/// (the CLI's default, lowered to three quarters of the available memory when that is less;
/// `--max-memory` changes it), 1 GiB in the browser (wasm32 addresses 4 GiB
/// at most, and the page keeps what it grows). With packed documents only a run needs about
/// 21.5 bytes per position, so about 400 million positions natively (docs/MODELS.md, "Memory").
pub const MAX_RUN_BYTES: u64 = if cfg!(target_arch = "wasm32") { 1 << 30 } else { 8 << 30 };

/// Why a config was refused. Every message is one line that starts with the field it is about.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ModelError {
    /// The input is larger than [`MAX_CONFIG_BYTES`].
    #[error("config: {bytes} bytes is more than the {max} allowed")]
    TooLarge {
        /// Size of the input.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// The input is not valid JSON (or not UTF-8).
    #[error("config: malformed JSON: {0}")]
    Json(String),
    /// A field has the wrong JSON type.
    #[error("{field}: expected {expected}, got {got}")]
    WrongType {
        /// The field, e.g. `text_config.sliding_window`.
        field: String,
        /// What it should be.
        expected: &'static str,
        /// What it is (clipped).
        got: String,
    },
    /// No `model_type` and no `layer_types` to read.
    #[error("model_type: missing, and there is no layer_types to read the layers from")]
    MissingModelType,
    /// A `model_type` whose legacy fields we do not know, in a file without `layer_types`.
    #[error(
        "{field}: unknown model type {model_type:?} and no layer_types: give layer_types, or use one of the supported types (hasseflow model --list)"
    )]
    UnknownModelType {
        /// `model_type` or `text_config.model_type`.
        field: String,
        /// The type (clipped).
        model_type: String,
    },
    /// A `layer_types` entry that is not a layer type we model.
    #[error("{field}[{index}]: {reason} {value:?}")]
    UnknownLayerType {
        /// `layer_types` (with its prefix).
        field: String,
        /// 0-based layer index.
        index: usize,
        /// The entry (clipped).
        value: String,
        /// `unknown layer type` or why a type Transformers knows is not modelled.
        reason: &'static str,
    },
    /// A window, chunk size or period that is not a positive integer.
    #[error("{field}: must be a positive integer, got {value}")]
    NotPositive {
        /// The field.
        field: String,
        /// The value as written.
        value: String,
    },
    /// Layer counts disagree (`num_hidden_layers` against `layer_types` or a per-layer list).
    #[error("{field}: lists {listed} layers, but num_hidden_layers is {declared}")]
    LayerCount {
        /// The per-layer field.
        field: String,
        /// Its length.
        listed: usize,
        /// `num_hidden_layers` (given or the config class's default).
        declared: u64,
    },
    /// More layers than [`MAX_LAYERS`].
    #[error("{field}: {count} layers is more than the {max} allowed")]
    TooManyLayers {
        /// The field.
        field: String,
        /// The count.
        count: u64,
        /// The limit.
        max: u64,
    },
    /// A layer needs a parameter the config does not set.
    #[error("{field}: {reason}")]
    Missing {
        /// The field that is missing or null.
        field: String,
        /// Which layer needs it.
        reason: String,
    },
    /// A field that changes the attention in a way hasseflow does not model.
    #[error("{field}: not supported: {reason}")]
    Unsupported {
        /// The field.
        field: String,
        /// Why.
        reason: String,
    },
    /// A gallery name that does not exist.
    #[error("unknown gallery model {0:?} (hasseflow model --list)")]
    UnknownGalleryName(String),
}

/// A direction the user states for a model (`--causal` / `--bidirectional`), over what the
/// config says or does not say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// A decoder: every layer also requires `k <= q`.
    Causal,
    /// An encoder.
    Bidirectional,
}

/// How to read a config beyond its text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// The direction the user states, if any (a note says when it overrides the config).
    pub direction: Option<Direction>,
    /// Set by the reader itself for the sub-configs of a wrapper (no note then).
    pub from_wrapper: bool,
}

/// Parses the text of a `config.json` into a [`ModelSpec`] named `name`.
///
/// # Errors
/// The [`ModelError`] naming the field that is refused.
#[cfg(feature = "model-reader")]
pub fn parse_config(text: &str, name: &str) -> Result<ModelSpec, ModelError> {
    parse_config_with(text, name, &ReadOptions::default())
}

/// [`parse_config`] with [`ReadOptions`].
///
/// # Errors
/// As [`parse_config`].
#[cfg(feature = "model-reader")]
pub fn parse_config_with(text: &str, name: &str, opts: &ReadOptions) -> Result<ModelSpec, ModelError> {
    if text.len() > MAX_CONFIG_BYTES {
        return Err(ModelError::TooLarge { bytes: text.len(), max: MAX_CONFIG_BYTES });
    }
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| ModelError::Json(e.to_string()))?;
    config::spec_from_value(&value, name, opts)
}

/// Whether this build links the config reader and the model type table (the `model-reader`
/// feature). Without it (the web app's first download) a read goes to the lazily loaded model
/// module through [`wire`].
pub const READER_LINKED: bool = cfg!(feature = "model-reader");

/// The text of a config given as bytes: refused when larger than [`MAX_CONFIG_BYTES`] or not
/// UTF-8 (as malformed JSON). The one check of [`parse_config_bytes_with`] and of a read sent to
/// the lazily loaded reader ([`wire::Request::config`]).
///
/// # Errors
/// [`ModelError::TooLarge`] or [`ModelError::Json`].
pub fn config_text(bytes: &[u8]) -> Result<&str, ModelError> {
    if bytes.len() > MAX_CONFIG_BYTES {
        return Err(ModelError::TooLarge { bytes: bytes.len(), max: MAX_CONFIG_BYTES });
    }
    std::str::from_utf8(bytes).map_err(|e| ModelError::Json(format!("not UTF-8: {e}")))
}

/// [`parse_config_with`] on bytes (refuses non-UTF-8 as malformed JSON).
///
/// # Errors
/// As [`config_text`] and [`parse_config`].
#[cfg(feature = "model-reader")]
pub fn parse_config_bytes_with(bytes: &[u8], name: &str, opts: &ReadOptions) -> Result<ModelSpec, ModelError> {
    parse_config_with(config_text(bytes)?, name, opts)
}

/// [`parse_config`] on bytes (refuses non-UTF-8 as malformed JSON).
///
/// # Errors
/// As [`parse_config_bytes_with`].
#[cfg(feature = "model-reader")]
pub fn parse_config_bytes(bytes: &[u8], name: &str) -> Result<ModelSpec, ModelError> {
    parse_config_bytes_with(bytes, name, &ReadOptions::default())
}

/// A model's layers in one line: [`pattern_summary`] of its layers, and for an encoder-decoder
/// the encoder's and the decoder's (`encoder 12 x full_attention; decoder 12 x full_attention +
/// cross-attention`).
pub fn pattern_line(spec: &ModelSpec) -> String {
    match &spec.encoder {
        None => pattern_summary(&spec.layers),
        Some(e) => {
            format!(
                "encoder {}; decoder {} + cross-attention",
                pattern_summary(&e.layers),
                pattern_summary(&spec.layers)
            )
        }
    }
}

/// A short description of a layer list: its shortest repeating period as runs, the number of
/// repetitions and what is left over, e.g. `(5 x sliding_attention(1024), full_attention) x 10,
/// then 2 x sliding_attention(1024)`.
pub fn pattern_summary(layers: &[LayerKind]) -> String {
    if layers.is_empty() {
        return "no layers".to_string();
    }
    let n = layers.len();
    // The shortest period p that covers at least two repetitions (else the whole list).
    let period = (1..=n / 2).find(|&p| (p..n).all(|i| layers[i] == layers[i - p])).unwrap_or(n);
    let reps = n / period;
    let rest = n % period;
    let block = runs(&layers[..period]);
    let mut out = if reps > 1 {
        if period == 1 { format!("{} x {}", reps, layers[0].label()) } else { format!("({block}) x {reps}") }
    } else {
        block
    };
    if rest > 0 {
        out.push_str(", then ");
        out.push_str(&runs(&layers[n - rest..]));
    }
    out
}

/// `a, 3 x b, c`: consecutive equal kinds as runs.
fn runs(layers: &[LayerKind]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < layers.len() {
        let mut j = i;
        while j < layers.len() && layers[j] == layers[i] {
            j += 1;
        }
        let label = layers[i].label();
        parts.push(if j - i > 1 { format!("{} x {label}", j - i) } else { label });
        i = j;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_name_the_period() {
        let s = LayerKind::Sliding { window: 4 };
        let f = LayerKind::Full;
        assert_eq!(pattern_summary(&[f; 3]), "3 x full_attention");
        assert_eq!(
            pattern_summary(&[s, f, s, f, s]),
            "(sliding_attention(4), full_attention) x 2, then sliding_attention(4)"
        );
        assert_eq!(pattern_summary(&[s, s, f]), "2 x sliding_attention(4), full_attention");
        assert_eq!(pattern_summary(&[]), "no layers");
    }
}
