//! Attention patterns of real models, described by rule rather than by cells.
//!
//! This is the seam between a model's configuration (`config.json`, the gallery) and the
//! structured reach engine: a model is a list of [`LayerKind`]s plus a direction, and a run adds
//! the sequence-level [`Overlays`] (packed documents, sinks, global tokens, a prefix). Every kind
//! means exactly what the mask functions of `transformers.masking_utils` compute for it on the
//! eager/SDPA path (docs/MODELS.md cites them).

use serde::{Deserialize, Serialize};

/// What one layer's attention lets a query `q` read, before overlays.
///
/// With `causal = true` every kind also requires `k <= q`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LayerKind {
    /// `full_attention`: every key (causal: `k <= q`).
    Full,
    /// `sliding_attention` with window `w >= 1`: causal `q - w < k <= q`; bidirectional
    /// `q - w < k < q + w`, i.e. `|q - k| <= w - 1` (Transformers 5.24's
    /// `sliding_window_bidirectional_overlay(w - 1)`, which is inclusive; docs/MODELS.md).
    Sliding {
        /// The window `w` (Transformers' `sliding_window`).
        window: u64,
    },
    /// `chunked_attention` with chunk size `c >= 1`: `k / c == q / c` (and `k <= q` when causal).
    Chunked {
        /// The chunk size `c` (Transformers' `attention_chunk_size`).
        size: u64,
    },
    /// `linear_attention` (a recurrent layer: state flows from every earlier position, so the
    /// flow is that of a causal full layer). Also an SSM block (Mamba, Mamba-2, RWKV, RG-LRU),
    /// and a layer with attention and an SSM side by side (their union is this).
    Linear,
    /// A short causal convolution of kernel width `w >= 1` (LFM2's `conv`): `q - w < k <= q`,
    /// always causal, and blind to document boundaries (no state reset), like `Linear`.
    Conv {
        /// The kernel width (LFM2's `conv_L_cache`).
        width: u64,
    },
    /// Data-dependent sparse attention (`indexed_attention`, DeepSeek-V3.2's top-k indexer):
    /// the static bound, every key the layer could select (a full layer's keys). The keys a
    /// real input selects are a subset that depends on the data.
    Indexed,
    /// A layer that mixes no positions (a MLP-only block): each query reads only itself.
    Pointwise,
}

impl LayerKind {
    /// The name used in reports, e.g. `sliding_attention(4096)`.
    pub fn label(&self) -> String {
        match self {
            LayerKind::Full => "full_attention".to_string(),
            LayerKind::Sliding { window } => format!("sliding_attention({window})"),
            LayerKind::Chunked { size } => format!("chunked_attention({size})"),
            LayerKind::Linear => "linear_attention".to_string(),
            LayerKind::Conv { width } => format!("conv({width})"),
            LayerKind::Indexed => "indexed_attention".to_string(),
            LayerKind::Pointwise => "pointwise".to_string(),
        }
    }

    /// Whether query `q` reads key `k` in this layer, before overlays: exactly the rule each
    /// variant documents (a `Linear` layer counts as reading every earlier position).
    pub fn allows(&self, q: u64, k: u64, causal: bool) -> bool {
        if (causal || self.always_causal()) && k > q {
            return false;
        }
        match *self {
            LayerKind::Full | LayerKind::Linear | LayerKind::Indexed => true,
            LayerKind::Conv { width } => q - k < width,
            LayerKind::Pointwise => q == k,
            LayerKind::Sliding { window } => q.abs_diff(k) < window,
            LayerKind::Chunked { size } => size > 0 && k / size == q / size,
        }
    }

    /// Recurrent kinds (`Linear`, `Conv`): causal whatever the model's direction, and blind to
    /// document boundaries (their state is not reset between packed documents).
    pub fn always_causal(&self) -> bool {
        matches!(self, LayerKind::Linear | LayerKind::Conv { .. })
    }

    /// Whether the layer's real support depends on the input (the kind is then a static bound).
    pub fn data_dependent(&self) -> bool {
        matches!(self, LayerKind::Indexed)
    }
}

/// Sequence-level structure added on top of every layer of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overlays {
    /// Packed documents: the lengths, in order, summing to `n` (empty: one document). A query
    /// reads only keys of its own document (Transformers' `packed_sequence_mask_function`), and
    /// positions restart at every document (`remap_positions_for_packed_sequence`), so chunks,
    /// sinks and the prefix count from the document's start. Linear layers ignore documents
    /// (their recurrence is not reset; see `crate::reach`).
    pub docs: Vec<u64>,
    /// Attention sinks: the first `sinks` positions (of the query's document) are readable by
    /// every query (only earlier ones when causal).
    pub sinks: u64,
    /// Global tokens (Longformer): each reads every key and is read by every query.
    pub globals: Vec<u64>,
    /// Prefix-LM: the first `prefix` positions (of each document) read each other bidirectionally.
    pub prefix: u64,
    /// Image spans `[start, length]` whose tokens read each other both ways, as Gemma 3 reads
    /// `token_type_ids` in Transformers 5.24 (`create_masks_for_vision_model`; spans that touch
    /// are one image, as a contiguous run of image tokens is). A full, indexed or chunked layer
    /// ORs "same image" into its mask; a sliding layer with window `w` ORs it and then keeps only
    /// `k > q - w` (so a query reads its whole image ahead, and `w - 1` back); recurrent and
    /// pointwise layers take no mask and ignore it. With packed documents the image is cut at
    /// its document, and a sliding layer looks "same image" up at the document-relative
    /// positions (Transformers remaps its `or_mask_function`): see `crate::reach`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<[u64; 2]>,
}

/// What a model does with packed documents given as position ids (positions restarting at 0 in
/// every document, as Transformers' `DataCollatorWithFlattening` gives them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Packing {
    /// Its masks detect the documents (Transformers' `find_packed_sequence_indices` inside the
    /// causal mask builders): [`Overlays::docs`] applies to every layer.
    #[default]
    Detected,
    /// Its masks ignore them (BERT, GPT-oss, …): every layer reads across documents as if they
    /// were one sequence; [`Overlays::docs`] only marks where the boundaries are (leaks).
    Ignored,
    /// Its masks detect them, but short convolutions beside its attention or recurrence read a
    /// few positions across each boundary, which no layer kind describes with documents: a run
    /// with more than one document is refused ([`ReachError::PackingUnmodelled`](crate::reach::ReachError)).
    Unmodelled,
}

impl Packing {
    /// `"detected"` or `"ignored"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Packing::Detected => "detected",
            Packing::Ignored => "ignored",
            Packing::Unmodelled => "unmodelled",
        }
    }

    fn is_detected(&self) -> bool {
        *self == Packing::Detected
    }
}

/// A model's attention, layer by layer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelSpec {
    /// Display name (gallery name or the config's file name).
    pub name: String,
    /// The config's `model_type`.
    pub model_type: String,
    /// Decoder (`true`: every layer also requires `k <= q`) or encoder.
    pub causal: bool,
    /// One kind per layer, in order (layer 1 first).
    pub layers: Vec<LayerKind>,
    /// The config's `max_position_embeddings`, when given.
    pub max_position_embeddings: Option<u64>,
    /// The encoder of an encoder-decoder model; `layers` and `causal` are then the decoder's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoder: Option<EncoderSpec>,
    /// What the reader wants the user to know (the tower it read, data-dependent layers, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// What its masks do with packed documents given as position ids.
    #[serde(default, skip_serializing_if = "Packing::is_detected")]
    pub packing: Packing,
}

/// The encoder of an encoder-decoder model (T5, BART, Whisper). A run places its `context`
/// positions before the decoder's: its layers come first and read only encoder positions, then
/// every decoder layer reads the decoder's keys by its own kind and, through cross-attention,
/// every encoder position as the encoder's last layer left it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EncoderSpec {
    /// One kind per encoder layer.
    pub layers: Vec<LayerKind>,
    /// Whether the encoder's self-attention is causal (it is not, in every model read).
    pub causal: bool,
    /// Encoder positions (0: not chosen yet; a run needs `1 <= context < n`).
    pub context: u64,
}

impl ModelSpec {
    /// Every layer of a run, encoder first, with the direction it runs in.
    pub fn all_layers(&self) -> impl Iterator<Item = (LayerKind, bool)> + '_ {
        let enc = self.encoder.iter().flat_map(|e| e.layers.iter().map(move |&k| (k, e.causal)));
        enc.chain(self.layers.iter().map(move |&k| (k, self.causal)))
    }

    /// Each layer's name in reports, encoder first: `encoder full_attention`, then `decoder
    /// full_attention + cross-attention` for an encoder-decoder, else [`LayerKind::label`].
    pub fn layer_labels(&self) -> Vec<String> {
        match &self.encoder {
            None => self.layers.iter().map(LayerKind::label).collect(),
            Some(e) => e
                .layers
                .iter()
                .map(|k| format!("encoder {}", k.label()))
                .chain(self.layers.iter().map(|k| format!("decoder {} + cross-attention", k.label())))
                .collect(),
        }
    }

    /// How many layers a run has (the encoder's and the decoder's).
    pub fn layer_count(&self) -> usize {
        self.layers.len() + self.encoder.as_ref().map_or(0, |e| e.layers.len())
    }
}

/// `x / factor`, rounded to the nearest integer (halves up), at least 1.
pub fn scale_length(x: u64, factor: u64) -> u64 {
    let f = factor.max(1);
    let r = x % f;
    (x / f + u64::from(r > 0 && r >= f - r)).max(1)
}

impl ModelSpec {
    /// The same model with every window and chunk size divided by `factor` (rounded, at least 1).
    /// Full and linear layers, the direction and the name stay (the name gets `1:factor`);
    /// `max_position_embeddings` is scaled the same way.
    ///
    /// # Examples
    /// ```
    /// use hasseflow_engine::pattern::{LayerKind, ModelSpec};
    /// let mistral = ModelSpec {
    ///     name: "mistral".into(),
    ///     model_type: "mistral".into(),
    ///     causal: true,
    ///     layers: vec![LayerKind::Sliding { window: 4096 }; 32],
    ///     max_position_embeddings: Some(32768),
    ///     encoder: None,
    ///     notes: Vec::new(),
    ///     packing: Default::default(),
    /// };
    /// let small = mistral.scaled(256);
    /// assert_eq!(small.layers[0], LayerKind::Sliding { window: 16 });
    /// assert_eq!(small.max_position_embeddings, Some(128));
    /// ```
    pub fn scaled(&self, factor: u64) -> ModelSpec {
        let scale = |layers: &[LayerKind]| -> Vec<LayerKind> {
            layers
                .iter()
                .map(|&k| match k {
                    LayerKind::Sliding { window } => LayerKind::Sliding { window: scale_length(window, factor) },
                    LayerKind::Chunked { size } => LayerKind::Chunked { size: scale_length(size, factor) },
                    other => other,
                })
                .collect()
        };
        let layers = scale(&self.layers);
        ModelSpec {
            encoder: self.encoder.as_ref().map(|e| EncoderSpec {
                layers: scale(&e.layers),
                causal: e.causal,
                context: if e.context > 0 { scale_length(e.context, factor) } else { 0 },
            }),
            notes: self.notes.clone(),
            packing: self.packing,
            name: if factor > 1 { format!("{} (scaled 1:{factor})", self.name) } else { self.name.clone() },
            model_type: self.model_type.clone(),
            causal: self.causal,
            layers,
            max_position_embeddings: self.max_position_embeddings.map(|m| scale_length(m, factor)),
        }
    }
}
