//! The gallery: real architectures with their published `config.json` parameters, trimmed to
//! the fields that matter for attention (the files live in `crates/core/gallery/`, outside
//! `src/` because every file there must be Rust source). Each entry cites the Hub file it was
//! transcribed from; docs/MODELS.md lists them.

use super::ModelError;
#[cfg(feature = "model-reader")]
use crate::pattern::ModelSpec;

/// One gallery model: what the Models view lists without reading it (the web app's first
/// download has no config reader: `model-reader` feature, ARCHITECTURE.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GalleryEntry {
    /// The name used on the command line, e.g. `mistral-7b-v0.1`.
    pub name: &'static str,
    /// The URL of the Hugging Face `config.json` the fields come from.
    pub source: &'static str,
    /// What the entry shows.
    pub notes: &'static str,
    /// The model's [`pattern_line`](super::pattern_line), as the reader gives it (a test reads
    /// every entry and compares).
    pub pattern: &'static str,
}

/// The gallery's two tables from one list: [`GALLERY`] (always) and each entry's trimmed
/// `config.json`, in the same order (with the reader only).
macro_rules! gallery {
    ($(($name:literal, $repo:literal, $notes:literal, $pattern:literal)),* $(,)?) => {
        /// Every gallery entry, in display order.
        pub static GALLERY: &[GalleryEntry] = &[$(GalleryEntry {
            name: $name,
            source: concat!("https://huggingface.co/", $repo, "/blob/main/config.json"),
            notes: $notes,
            pattern: $pattern,
        }),*];
        /// [`GALLERY`]'s configs, entry by entry.
        #[cfg(feature = "model-reader")]
        static CONFIGS: &[&str] = &[$(include_str!(concat!("../../gallery/", $name, ".json"))),*];
    };
}

gallery! {
    ("mistral-7b-v0.1", "mistralai/Mistral-7B-v0.1", "no layer_types; sliding_window 4096 in every layer", "32 x sliding_attention(4096)"),
    ("mixtral-8x7b-v0.1", "mistralai/Mixtral-8x7B-v0.1", "sliding_window null: every layer full", "32 x full_attention"),
    ("phi-3-mini-4k", "microsoft/Phi-3-mini-4k-instruct", "sliding_window 2047 in every layer", "32 x sliding_attention(2047)"),
    ("llama-3.1-8b", "meta-llama/Llama-3.1-8B", "plain causal, every layer full", "32 x full_attention"),
    ("gemma-2-9b", "google/gemma-2-9b", "no layer_types; alternating sliding(4096)/full, sliding first", "(sliding_attention(4096), full_attention) x 21"),
    ("gemma-3-1b-it", "google/gemma-3-1b-it", "sliding_window_pattern 6: five sliding(512), one full", "(5 x sliding_attention(512), full_attention) x 4, then 2 x sliding_attention(512)"),
    ("gemma-3-27b-it", "google/gemma-3-27b-it", "text_config; pattern 6 by the class default, window 1024", "(5 x sliding_attention(1024), full_attention) x 10, then 2 x sliding_attention(1024)"),
    (
        "llama-4-scout-17b-16e",
        "meta-llama/Llama-4-Scout-17B-16E",
        "text_config; chunked(8192), every 4th layer full (NoPE)",
        "(3 x chunked_attention(8192), full_attention) x 12"
    ),
    ("gpt-oss-20b", "openai/gpt-oss-20b", "layer_types: alternating sliding(128)/full", "(sliding_attention(128), full_attention) x 12"),
    (
        "command-r7b",
        "CohereForAI/c4ai-command-r7b-12-2024",
        "cohere2, sliding_window_pattern 4: three sliding(4096), one full",
        "(3 x sliding_attention(4096), full_attention) x 8"
    ),
    ("olmo-3-7b", "allenai/Olmo-3-1025-7B", "layer_types: three sliding(4096), one full", "(3 x sliding_attention(4096), full_attention) x 8"),
    ("qwen2.5-7b", "Qwen/Qwen2.5-7B", "use_sliding_window false: sliding_window 131072 is ignored", "28 x full_attention"),
    (
        "qwen3-next-80b-a3b",
        "Qwen/Qwen3-Next-80B-A3B-Instruct",
        "full_attention_interval 4: three linear (Gated DeltaNet), one full",
        "(3 x linear_attention, full_attention) x 12"
    ),
    (
        "modernbert-base",
        "answerdotai/ModernBERT-base",
        "encoder; local_attention 128 (|q-k| <= 64), global every 3rd layer",
        "(full_attention, 2 x sliding_attention(65)) x 7, then full_attention"
    ),
    (
        "longformer-base-4096",
        "allenai/longformer-base-4096",
        "encoder; attention_window 512 per layer (|q-k| <= 256)",
        "12 x sliding_attention(257)"
    ),
    (
        "gpt2",
        "openai-community/gpt2",
        "GPT-2: n_layer 12, learned positions (n_positions 1024), every layer full",
        "12 x full_attention"
    ),
    ("pythia-1.4b", "EleutherAI/pythia-1.4b", "gpt_neox: 24 layers, every layer full", "24 x full_attention"),
    ("falcon-7b", "tiiuae/falcon-7b", "falcon: multi-query, parallel attention, every layer full", "32 x full_attention"),
    ("opt-1.3b", "facebook/opt-1.3b", "opt: 24 layers, every layer full", "24 x full_attention"),
    ("bloom-560m", "bigscience/bloom-560m", "bloom: n_layer 24, ALiBi, no position limit in the file", "24 x full_attention"),
    ("gpt-j-6b", "EleutherAI/gpt-j-6b", "gptj: n_layer 28, n_positions 2048, every layer full", "28 x full_attention"),
    ("llama-2-7b", "meta-llama/Llama-2-7b-hf", "plain causal, every layer full, 4096 positions", "32 x full_attention"),
    ("phi-2", "microsoft/phi-2", "phi: 32 layers, every layer full", "32 x full_attention"),
    ("gemma-7b", "google/gemma-7b", "gemma (1): 28 layers, every layer full", "28 x full_attention"),
    ("olmo-2-7b", "allenai/OLMo-2-1124-7B", "olmo2: no window, every layer full", "32 x full_attention"),
    ("starcoder2-15b", "bigcode/starcoder2-15b", "no layer_types; sliding_window 4096 in every layer", "40 x sliding_attention(4096)"),
    (
        "mistral-nemo-base-2407",
        "mistralai/Mistral-Nemo-Base-2407",
        "mistral with sliding_window null: every layer full",
        "40 x full_attention"
    ),
    ("qwen3-8b", "Qwen/Qwen3-8B", "use_sliding_window false: every layer full", "36 x full_attention"),
    ("qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B", "qwen3_moe, use_sliding_window false: every layer full", "48 x full_attention"),
    ("deepseek-v3", "deepseek-ai/DeepSeek-V3", "MLA + MoE: 61 layers, every layer full", "61 x full_attention"),
    (
        "deepseek-v3.2-exp",
        "deepseek-ai/DeepSeek-V3.2-Exp",
        "deepseek_v32: indexed (top-2048 sparse) attention in every layer",
        "61 x indexed_attention"
    ),
    (
        "kimi-k2-instruct",
        "moonshotai/Kimi-K2-Instruct",
        "model_type kimi_k2 (remote code, DeepSeek-V3 architecture): 61 layers, every layer full",
        "61 x full_attention"
    ),
    ("glm-4.5", "zai-org/GLM-4.5", "glm4_moe: 92 layers, every layer full", "92 x full_attention"),
    (
        "gemma-3n-e4b-it",
        "google/gemma-3n-E4B-it",
        "text_config; layer_types: four sliding(512), one full; last 15 layers share KV",
        "(4 x sliding_attention(512), full_attention) x 7"
    ),
    (
        "qwen2.5-vl-7b",
        "Qwen/Qwen2.5-VL-7B-Instruct",
        "flat composite (no text_config); use_sliding_window false: every layer full",
        "28 x full_attention"
    ),
    ("mamba-2.8b", "state-spaces/mamba-2.8b-hf", "mamba: 64 recurrent (linear) layers, no attention", "64 x linear_attention"),
    ("falcon-mamba-7b", "tiiuae/falcon-mamba-7b", "falcon_mamba: 64 recurrent (linear) layers, no attention", "64 x linear_attention"),
    (
        "mamba-codestral-7b",
        "mistralai/Mamba-Codestral-7B-v0.1",
        "mamba2: 64 recurrent (linear) layers (Mamba-2 SSD), no attention",
        "64 x linear_attention"
    ),
    (
        "jamba-1.5-mini",
        "ai21labs/AI21-Jamba-1.5-Mini",
        "hybrid: Mamba layers with an attention layer every 8th (offset 4)",
        "(4 x linear_attention, full_attention, 3 x linear_attention) x 4"
    ),
    (
        "nemotron-h-8b",
        "nvidia/Nemotron-H-8B-Base-8K",
        "hybrid_override_pattern: Mamba-2 (M), MLP (-) and 4 attention (*) layers",
        "linear_attention, pointwise, linear_attention, pointwise, linear_attention, pointwise, linear_attention, full_attention, pointwise, linear_attention, pointwise, linear_attention, pointwise, linear_attention, pointwise, linear_attention, pointwise, linear_attention, full_attention, pointwise, linear_attention, pointwise, linear_attention, pointwise, linear_attention, pointwise, linear_attention, pointwise, linear_attention, full_attention, pointwise, linear_attention, pointwise, linear_attention, pointwise, linear_attention, pointwise, linear_attention, pointwise, linear_attention, full_attention, pointwise, linear_attention, pointwise, linear_attention, pointwise, linear_attention, pointwise, linear_attention, pointwise, linear_attention, pointwise"
    ),
    (
        "falcon-h1-7b",
        "tiiuae/Falcon-H1-7B-Base",
        "parallel hybrid: attention and Mamba-2 side by side in every layer",
        "44 x linear_attention"
    ),
    (
        "lfm2-1.2b",
        "LiquidAI/LFM2-1.2B",
        "full_attn_idxs: 6 attention layers among 10 short-conv layers (conv_L_cache 3)",
        "2 x conv(3), full_attention, 2 x conv(3), full_attention, 2 x conv(3), full_attention, conv(3), full_attention, conv(3), full_attention, conv(3), full_attention, conv(3)"
    ),
    (
        "recurrentgemma-2b",
        "google/recurrentgemma-2b",
        "_block_types: two recurrent, one local attention (window 2048)",
        "(2 x linear_attention, sliding_attention(2048)) x 8, then 2 x linear_attention"
    ),
    ("bert-base-uncased", "google-bert/bert-base-uncased", "encoder; 12 bidirectional full layers", "12 x full_attention"),
    ("roberta-base", "FacebookAI/roberta-base", "encoder; 12 bidirectional full layers", "12 x full_attention"),
    ("xlm-roberta-base", "FacebookAI/xlm-roberta-base", "encoder; 12 bidirectional full layers", "12 x full_attention"),
    ("distilbert-base-uncased", "distilbert/distilbert-base-uncased", "encoder; n_layers 6, bidirectional full", "6 x full_attention"),
    (
        "deberta-v3-base",
        "microsoft/deberta-v3-base",
        "encoder (deberta-v2); relative positions, 12 bidirectional full layers",
        "12 x full_attention"
    ),
    (
        "modernbert-large",
        "answerdotai/ModernBERT-large",
        "encoder; local_attention 128 (|q-k| <= 64), global every 3rd layer",
        "(full_attention, 2 x sliding_attention(65)) x 9, then full_attention"
    ),
    (
        "t5-base",
        "google-t5/t5-base",
        "encoder-decoder: 12 encoder layers, then 12 decoder layers reading the encoder",
        "encoder 12 x full_attention; decoder 12 x full_attention + cross-attention"
    ),
    (
        "bart-large",
        "facebook/bart-large",
        "encoder-decoder: 12 encoder layers, then 12 decoder layers reading the encoder",
        "encoder 12 x full_attention; decoder 12 x full_attention + cross-attention"
    ),
    (
        "whisper-large-v3",
        "openai/whisper-large-v3",
        "encoder-decoder: 32 audio encoder layers (1500 frames), then 32 decoder layers",
        "encoder 32 x full_attention; decoder 32 x full_attention + cross-attention"
    ),
}

/// The gallery entries.
pub fn gallery() -> &'static [GalleryEntry] {
    GALLERY
}

/// The gallery entry named `name`.
///
/// # Errors
/// [`ModelError::UnknownGalleryName`].
pub fn gallery_entry(name: &str) -> Result<&'static GalleryEntry, ModelError> {
    GALLERY.iter().find(|e| e.name == name).ok_or_else(|| ModelError::UnknownGalleryName(name.to_string()))
}

impl GalleryEntry {
    /// The trimmed `config.json` this entry was transcribed to.
    #[cfg(feature = "model-reader")]
    pub fn config(&self) -> &'static str {
        let i = GALLERY.iter().position(|e| e.name == self.name).unwrap_or(0);
        CONFIGS[i]
    }
}

/// The model of a gallery entry, by name.
///
/// # Errors
/// [`ModelError::UnknownGalleryName`], or the reader's refusal (a test guards that none fails).
#[cfg(feature = "model-reader")]
pub fn load_gallery(name: &str) -> Result<ModelSpec, ModelError> {
    let entry = gallery_entry(name)?;
    super::parse_config(entry.config(), entry.name)
}

/// The gallery as `hasseflow model --list --json` prints it: name, model_type, layers,
/// encoder_layers, causal, pattern, source, notes per entry.
///
/// # Errors
/// An entry that does not read (a test guards that none fails).
#[cfg(feature = "model-reader")]
pub fn gallery_json() -> Result<serde_json::Value, ModelError> {
    let rows = GALLERY
        .iter()
        .map(|e| {
            let s = load_gallery(e.name)?;
            Ok(serde_json::json!({"name": e.name, "model_type": s.model_type, "layers": s.layer_count(),
                   "encoder_layers": s.encoder.as_ref().map(|e| e.layers.len()), "causal": s.causal,
                   "pattern": super::pattern_summary(&s.layers), "source": e.source, "notes": e.notes}))
        })
        .collect::<Result<Vec<_>, ModelError>>()?;
    Ok(serde_json::Value::Array(rows))
}

#[cfg(all(test, feature = "model-reader"))]
mod tests {
    use super::*;

    /// What the Models view lists without the reader is what the reader reads: each entry's
    /// pattern line, and its config at the entry's own index.
    #[test]
    fn every_entry_lists_the_pattern_its_config_reads_to() {
        assert_eq!(CONFIGS.len(), GALLERY.len());
        for e in GALLERY {
            let spec = load_gallery(e.name).expect(e.name);
            assert_eq!(e.pattern, super::super::pattern_line(&spec), "{}", e.name);
            assert_eq!(gallery_entry(e.name).map(|g| g.config()), Ok(e.config()));
        }
        // The tables line up: the first and last entries' configs name what the entries show.
        assert!(GALLERY[0].config().contains("\"sliding_window\": 4096"), "{}", GALLERY[0].config());
        assert!(GALLERY[GALLERY.len() - 1].config().contains("whisper"));
    }
}
