//! The gallery: real architectures with their published `config.json` parameters, trimmed to
//! the fields that matter for attention (the files live in `crates/core/gallery/`, outside
//! `src/` because every file there must be Rust source). Each entry cites the Hub file it was
//! transcribed from; docs/MODELS.md lists them.

use super::{ModelError, parse_config};
use crate::pattern::ModelSpec;

/// One gallery model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GalleryEntry {
    /// The name used on the command line, e.g. `mistral-7b-v0.1`.
    pub name: &'static str,
    /// The URL of the Hugging Face `config.json` the fields come from.
    pub source: &'static str,
    /// What the entry shows.
    pub notes: &'static str,
    /// The trimmed `config.json`.
    pub config: &'static str,
}

macro_rules! entry {
    ($name:literal, $repo:literal, $notes:literal) => {
        GalleryEntry {
            name: $name,
            source: concat!("https://huggingface.co/", $repo, "/blob/main/config.json"),
            notes: $notes,
            config: include_str!(concat!("../../gallery/", $name, ".json")),
        }
    };
}

/// Every gallery entry, in display order.
pub static GALLERY: &[GalleryEntry] = &[
    entry!("mistral-7b-v0.1", "mistralai/Mistral-7B-v0.1", "no layer_types; sliding_window 4096 in every layer"),
    entry!("mixtral-8x7b-v0.1", "mistralai/Mixtral-8x7B-v0.1", "sliding_window null: every layer full"),
    entry!("phi-3-mini-4k", "microsoft/Phi-3-mini-4k-instruct", "sliding_window 2047 in every layer"),
    entry!("llama-3.1-8b", "meta-llama/Llama-3.1-8B", "plain causal, every layer full"),
    entry!("gemma-2-9b", "google/gemma-2-9b", "no layer_types; alternating sliding(4096)/full, sliding first"),
    entry!("gemma-3-1b-it", "google/gemma-3-1b-it", "sliding_window_pattern 6: five sliding(512), one full"),
    entry!("gemma-3-27b-it", "google/gemma-3-27b-it", "text_config; pattern 6 by the class default, window 1024"),
    entry!(
        "llama-4-scout-17b-16e",
        "meta-llama/Llama-4-Scout-17B-16E",
        "text_config; chunked(8192), every 4th layer full (NoPE)"
    ),
    entry!("gpt-oss-20b", "openai/gpt-oss-20b", "layer_types: alternating sliding(128)/full"),
    entry!(
        "command-r7b",
        "CohereForAI/c4ai-command-r7b-12-2024",
        "cohere2, sliding_window_pattern 4: three sliding(4096), one full"
    ),
    entry!("olmo-3-7b", "allenai/Olmo-3-1025-7B", "layer_types: three sliding(4096), one full"),
    entry!("qwen2.5-7b", "Qwen/Qwen2.5-7B", "use_sliding_window false: sliding_window 131072 is ignored"),
    entry!(
        "qwen3-next-80b-a3b",
        "Qwen/Qwen3-Next-80B-A3B-Instruct",
        "full_attention_interval 4: three linear (Gated DeltaNet), one full"
    ),
    entry!(
        "modernbert-base",
        "answerdotai/ModernBERT-base",
        "encoder; local_attention 128 (|q-k| <= 64), global every 3rd layer"
    ),
    entry!(
        "longformer-base-4096",
        "allenai/longformer-base-4096",
        "encoder; attention_window 512 per layer (|q-k| <= 256)"
    ),
];

/// The gallery entries.
pub fn gallery() -> &'static [GalleryEntry] {
    GALLERY
}

/// The model of a gallery entry, by name.
pub fn load_gallery(name: &str) -> Result<ModelSpec, ModelError> {
    let entry =
        GALLERY.iter().find(|e| e.name == name).ok_or_else(|| ModelError::UnknownGalleryName(name.to_string()))?;
    parse_config(entry.config, entry.name)
}
