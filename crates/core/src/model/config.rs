//! The config reader: field access with typed errors, and one derivation per `model_type`
//! mirroring the `__post_init__` of its Transformers 5.24 config class and the mask its modeling
//! file builds for each layer type (docs/MODELS.md has the table and the source lines).

use serde_json::{Map, Value};

use super::types_def::{PackingFact, Role, TypeFacts, facts};
use super::{Direction, MAX_LAYERS, ModelError, ReadOptions};
use crate::pattern::{EncoderSpec, LayerKind, ModelSpec, Packing};

/// The `model_type`s whose legacy fields are derived here (any other type needs `layer_types`).
pub const SUPPORTED_MODEL_TYPES: &[&str] = &[
    "bert",
    "cohere2",
    "gemma2",
    "gemma3",
    "gemma3_text",
    "gpt_oss",
    "llama",
    "llama4",
    "llama4_text",
    "longformer",
    "ministral",
    "mistral",
    "mixtral",
    "modernbert",
    "olmo3",
    "phi3",
    "qwen2",
    "qwen3",
    "qwen3_next",
    "roberta",
];

/// Types published with remote code that Transformers reads as one of its own (Kimi-K2.5's
/// config renames a `kimi_k2` text config to `deepseek_v3`, "to load from remote config on the hub").
const ALIASES: &[(&str, &str)] = &[("kimi_k2", "deepseek_v3")];

/// What a model does to its text tower beyond the masks of the layers read: by the composite's
/// type (Grounding DINO) or the tower's own (AIMv2, VideoPrism).
const TOWER_NOTES: &[(&str, &str)] = &[
    ("grounding-dino", PHRASES),
    ("mm-grounding-dino", PHRASES),
    ("aimv2_text_model", CAUSAL_WITH_MASK),
    ("videoprism_text_model", CAUSAL_WITH_MASK),
];

/// `Aimv2TextModel` and `VideoPrismTextModel` call `create_causal_mask` only under
/// `if attention_mask is not None`, and their attention's `is_causal` is false.
const CAUSAL_WITH_MASK: &str = "the text model is causal when it is given an attention_mask (its processor always \
     passes one); called without one it reads every position both ways";

/// Grounding DINO's `generate_masks_with_special_tokens_and_transfer_map`.
const PHRASES: &str = "the model masks its text tower's self-attention to phrases, which depend on the input (a \
     phrase runs up to and including a '.' or '?' token; [CLS] and the tokens through the closing [SEP] read only \
     themselves): shown is the static bound, every position reading every other";

/// Fields that change the mask in ways no layer kind describes; refused when set to anything
/// but their harmless value (for model types that do not define them).
const FOREIGN_FIELDS: &[(&str, &str)] = &[
    ("attention_type", "block-sparse or other attention types (BigBird) are not modelled"),
    ("attention_types", "GPT-Neo style local/global lists are not modelled; give layer_types"),
    ("use_bidirectional_attention", "bidirectional variants are modelled only for gemma3_text"),
    ("local_attention", "local_attention is read only for modernbert"),
    ("attention_window", "attention_window is read only for longformer"),
];

/// One JSON object and the prefix of its field names in messages (`""` or `text_config.`).
struct Fields<'a> {
    obj: &'a Map<String, Value>,
    prefix: &'static str,
}

fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        out.push('…');
    }
    out
}

impl<'a> Fields<'a> {
    fn name(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// The value, `None` when absent or null.
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.obj.get(key).filter(|v| !v.is_null())
    }

    fn has(&self, key: &str) -> bool {
        self.obj.contains_key(key)
    }

    fn wrong(&self, key: &str, expected: &'static str, v: &Value) -> ModelError {
        ModelError::WrongType { field: self.name(key), expected, got: clip(&v.to_string()) }
    }

    fn string(&self, key: &str) -> Result<Option<&'a str>, ModelError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(self.wrong(key, "a string", v)),
        }
    }

    fn boolean(&self, key: &str) -> Result<Option<bool>, ModelError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.wrong(key, "true or false", v)),
        }
    }

    /// An integer (any sign); `None` when absent or null.
    fn int(&self, key: &str) -> Result<Option<i64>, ModelError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => match v.as_i64() {
                Some(i) => Ok(Some(i)),
                None => Err(self.wrong(key, "an integer", v)),
            },
        }
    }

    /// A positive integer (windows, chunk sizes, periods): `None` when absent or null.
    fn positive(&self, key: &str) -> Result<Option<u64>, ModelError> {
        self.positive_value(key, self.get(key))
    }

    fn positive_value(&self, key: &str, v: Option<&Value>) -> Result<Option<u64>, ModelError> {
        let Some(v) = v else { return Ok(None) };
        match v.as_u64() {
            Some(0) => Err(ModelError::NotPositive { field: self.name(key), value: "0".to_string() }),
            Some(u) => Ok(Some(u)),
            None if v.as_i64().is_some() => {
                Err(ModelError::NotPositive { field: self.name(key), value: clip(&v.to_string()) })
            }
            None => Err(self.wrong(key, "a positive integer", v)),
        }
    }

    /// A positive integer with a default for absent (not for null: null is refused as missing).
    fn positive_or(&self, key: &str, default: u64) -> Result<u64, ModelError> {
        match self.obj.get(key) {
            None => Ok(default),
            Some(Value::Null) => Err(ModelError::Missing { field: self.name(key), reason: "is null".to_string() }),
            Some(v) => Ok(self.positive_value(key, Some(v))?.unwrap_or(default)),
        }
    }

    /// `num_hidden_layers`, or the config class's default when absent.
    fn layer_count(&self, default: Option<u64>) -> Result<Option<u64>, ModelError> {
        counted(self, "num_hidden_layers", default)
    }

    /// `layer_types` as strings (legacy names remapped as `remap_legacy_layer_types` does).
    fn layer_types(&self) -> Result<Option<Vec<String>>, ModelError> {
        let key = "layer_types";
        let Some(v) = self.get(key) else { return Ok(None) };
        let Value::Array(items) = v else { return Err(self.wrong(key, "a list of layer type strings", v)) };
        if items.len() as u64 > MAX_LAYERS {
            return Err(ModelError::TooManyLayers {
                field: self.name(key),
                count: items.len() as u64,
                max: MAX_LAYERS,
            });
        }
        items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) => Ok(match s.as_str() {
                    "mamba" => "linear_attention".to_string(),
                    "attention" => "full_attention".to_string(),
                    other => other.to_string(),
                }),
                other => Err(ModelError::WrongType {
                    field: format!("{}[{i}]", self.name(key)),
                    expected: "a layer type string",
                    got: clip(&other.to_string()),
                }),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}

/// What a derivation produces before it becomes a [`ModelSpec`].
struct Derived {
    layers: Vec<LayerKind>,
    causal: bool,
    encoder: Option<EncoderSpec>,
}

/// Parameters that turn layer type names into kinds.
struct Params {
    /// `LayerKind::Sliding`'s window for `sliding_attention` layers (already mapped to the seam's
    /// meaning), or the reason it is missing.
    window: Result<u64, String>,
    /// The field the window comes from (for messages).
    window_field: String,
    /// `attention_chunk_size` for `chunked_attention` layers.
    chunk: Option<u64>,
}

impl Params {
    /// The fields every type names the same way: `sliding_window`, `attention_chunk_size`.
    /// A field that no layer uses never stops a read (Qwen2-MoE's own `save_pretrained` writes
    /// `sliding_window: 0` beside `use_sliding_window: false`): a bad window is refused only
    /// when a `sliding_attention` layer needs it.
    fn common(f: &Fields) -> Result<Params, ModelError> {
        let window = match sliding_window_or(f, None) {
            Ok(w) => window_param(f, w),
            Err(ModelError::NotPositive { value, .. }) => Err(format!("must be a positive integer, got {value}")),
            Err(ModelError::WrongType { expected, got, .. }) => Err(format!("expected {expected}, got {got}")),
            Err(e) => return Err(e),
        };
        Ok(Params {
            window,
            window_field: f.name("sliding_window"),
            chunk: f.positive("attention_chunk_size").ok().flatten(),
        })
    }
}

/// The kernel-width fields of short causal convolutions, in the order they are looked for.
const CONV_FIELDS: &[&str] = &["conv_L_cache", "conv_kernel", "conv_kernel_size", "short_conv_kernel_size"];

/// What a layer-type name without a parameter means, or why it is refused.
fn kind_of(name: &str) -> Result<LayerKind, &'static str> {
    Ok(match name {
        "full_attention" | "attention" | "global" => LayerKind::Full,
        // An SSM, a linear recurrence, or attention beside an SSM in one layer (their union).
        "linear_attention" | "mamba" | "mamba2" | "recurrent" | "hybrid" | "rwkv" | "m" | "linear" => LayerKind::Linear,
        "indexed_attention" => LayerKind::Indexed,
        "mlp" | "moe" => LayerKind::Pointwise,
        "window_attention"
        | "compressed_sparse_attention"
        | "heavily_compressed_attention"
        | "minimax_m3_sparse"
        | "hybrid_sliding"
        | "reference_sliding_attention" => {
            return Err(
                "layer type known to Transformers but not modelled (give full_attention there for the layer's static bound):",
            );
        }
        _ => return Err("unknown layer type"),
    })
}

pub(super) fn spec_from_value(value: &Value, name: &str, opts: &ReadOptions) -> Result<ModelSpec, ModelError> {
    let Value::Object(top) = value else {
        return Err(ModelError::WrongType {
            field: "config".to_string(),
            expected: "a JSON object",
            got: clip(&value.to_string()),
        });
    };
    let top = Fields { obj: top, prefix: "" };
    let top_type = top.string("model_type")?;
    let mut notes = Vec::new();

    // A generic encoder-decoder (`EncoderDecoderModel`, T5Gemma): two sub-configs.
    let encoder = match (top.get("encoder"), top.get("text_encoder")) {
        (Some(Value::Object(e)), _) => Some(Fields { obj: e, prefix: "encoder." }),
        (_, Some(Value::Object(e))) => Some(Fields { obj: e, prefix: "text_encoder." }),
        _ => None,
    };
    if let (Some(enc), Some(Value::Object(dec))) = (encoder, top.get("decoder")) {
        let dec = Fields { obj: dec, prefix: "decoder." };
        // An image or audio encoder (VisionEncoderDecoder's ViT): the text is the decoder's; its
        // cross-attention reads encoder states that are not positions of this sequence.
        let enc_type = enc.string("model_type")?;
        if !enc_type.is_some_and(|t| facts(t).is_some() || SUPPORTED_MODEL_TYPES.contains(&t)) {
            let (mut spec, model_type) = read_tower(
                &dec,
                None,
                &ReadOptions { direction: Some(Direction::Causal), from_wrapper: true },
                &mut notes,
            )?;
            spec.causal = true;
            notes.push(format!(
                "the text tower was read: the decoder ({model_type}); the encoder ({}) is not a text model, and the \
                 decoder's cross-attention reads its states, not positions of this sequence",
                clip(enc_type.unwrap_or("no model_type"))
            ));
            return finish(spec, name, &model_type, notes);
        }
        // A composite encoder (T5Gemma 2's, with its own text_config).
        let enc_text = match enc.get("text_config") {
            Some(Value::Object(o)) => Some(Fields { obj: o, prefix: "encoder.text_config." }),
            _ => None,
        };
        let enc = enc_text.unwrap_or(enc);
        // The sub-configs' roles are the wrapper's: the encoder reads both ways (a T5 used as
        // MusicGen's text encoder is its encoder stack), the decoder is causal.
        let as_encoder = ReadOptions { direction: Some(Direction::Bidirectional), from_wrapper: true };
        let (enc_spec, _) = read_tower(&enc, None, &as_encoder, &mut notes)?;
        let mut enc_spec = enc_spec;
        if let Some(inner) = enc_spec.encoder.take() {
            enc_spec.layers = inner.layers;
            enc_spec.causal = inner.causal;
        }
        if top_type == Some("t5gemma2") && enc_spec.layers.iter().any(|k| matches!(k, LayerKind::Sliding { .. })) {
            return Err(ModelError::Unsupported {
                field: "encoder.text_config.layer_types".to_string(),
                reason:
                    "T5Gemma 2's encoder windows are asymmetric (w / 2 keys back, w / 2 - 1 ahead), which no layer \
                         kind describes; give full_attention there for the static bound"
                        .to_string(),
            });
        }
        let (mut spec, model_type) = read_tower(
            &dec,
            None,
            &ReadOptions { direction: Some(Direction::Causal), from_wrapper: true },
            &mut notes,
        )?;
        spec.causal = true;
        spec.encoder = Some(EncoderSpec { layers: enc_spec.layers, causal: enc_spec.causal, context: 0 });
        notes.push(format!(
            "encoder-decoder: the encoder ({}) and the decoder ({model_type}) were read",
            enc.string("model_type")?.unwrap_or("?")
        ));
        return finish(spec, name, top_type.unwrap_or_default(), notes);
    }

    // Composite (multimodal) configs keep the language model in `text_config`.
    let composite = top_type.and_then(facts).filter(|t| t.role == Role::Composite);
    // A vision-language-action config keeps its language model in `vlm_config.text_config` (π0).
    if !top.has("text_config")
        && let Some(Value::Object(vlm)) = top.get("vlm_config")
        && let Some(Value::Object(text)) = vlm.get("text_config")
    {
        let text = Fields { obj: text, prefix: "vlm_config.text_config." };
        let (spec, model_type) = read_tower(&text, text.string("model_type")?, opts, &mut notes)?;
        notes.insert(
            0,
            format!(
                "the text tower was read: vlm_config.text_config ({model_type}) of the {} config",
                top_type.unwrap_or("?")
            ),
        );
        return finish(spec, name, &model_type, notes);
    }
    let text_obj = match top.obj.get("text_config") {
        None | Some(Value::Null) => None,
        Some(Value::Object(o)) => Some(o),
        Some(v) if composite.is_some() => return Err(top.wrong("text_config", "a JSON object", v)),
        Some(_) => None,
    };
    if composite.is_some() || (text_obj.is_some() && !top.has("num_hidden_layers")) {
        let empty = Map::new();
        // A flat file (Qwen2.5-VL's published config: the text fields at the top, no
        // `text_config`) is read at the top, as the config class passes them on.
        let flat = text_obj.is_none() && top.has("num_hidden_layers");
        let text = match text_obj {
            Some(obj) => Fields { obj, prefix: "text_config." },
            None if flat => Fields { obj: top.obj, prefix: "" },
            None => Fields { obj: &empty, prefix: "text_config." },
        };
        let default = composite.map(|c| c.text).filter(|t| !t.is_empty());
        let t = if flat { default } else { text.string("model_type")?.or(default) };
        // `CONFIG_MAPPING[text_config["model_type"]](**text_config)`: a composite type here
        // builds a second composite config, whose own (absent) text_config holds the layers,
        // so none of this text_config's fields would be read.
        if let Some((inner, inner_facts)) =
            t.and_then(|t| facts(t).filter(|f| f.role == Role::Composite).map(|f| (t, f)))
        {
            let inner_text = inner_facts.text;
            return Err(ModelError::Unsupported {
                field: text.name("model_type"),
                reason: format!(
                    "{inner:?} is the multimodal wrapper's type, not a language model's: Transformers would \
                     nest a second {inner} config and ignore this text_config's fields (layer_types \
                     included); give {inner_text:?} or leave model_type out"
                ),
            });
        }
        let (spec, model_type) = if flat {
            let shadow = without(top.obj, "model_type");
            read_tower(&Fields { obj: &shadow, prefix: "" }, t, opts, &mut notes)?
        } else {
            read_tower(&text, t, opts, &mut notes)?
        };
        let place = if flat { "the top-level text fields" } else { "text_config" };
        notes.insert(
            0,
            format!(
                "the text tower was read: {place} ({model_type}) of the {} config",
                top_type.unwrap_or("composite")
            ),
        );
        if let Some((_, note)) = TOWER_NOTES.iter().find(|(t, _)| Some(*t) == top_type) {
            notes.push((*note).to_string());
        }
        return finish(spec, name, &model_type, notes);
    }
    let (spec, model_type) = read_tower(&top, top_type, opts, &mut notes)?;
    finish(spec, name, &model_type, notes)
}

fn finish(mut spec: ModelSpec, name: &str, model_type: &str, mut notes: Vec<String>) -> Result<ModelSpec, ModelError> {
    if let Some((_, note)) = TOWER_NOTES.iter().find(|(t, _)| *t == model_type) {
        notes.push((*note).to_string());
    }
    let indexed: Vec<String> =
        spec.layers.iter().enumerate().filter(|(_, k)| k.data_dependent()).map(|(i, _)| (i + 1).to_string()).collect();
    if !indexed.is_empty() {
        notes.push(format!(
            "layers {} are indexed_attention (top-k keys chosen from the input): shown is the static bound, every key the \
             layer could select; the keys a real input selects depend on the data",
            clip_list(&indexed)
        ));
    }
    notes.append(&mut spec.notes);
    spec.notes = notes;
    spec.name = name.to_string();
    spec.model_type = model_type.to_string();
    Ok(spec)
}

fn clip_list(items: &[String]) -> String {
    if items.len() <= 8 { items.join(", ") } else { format!("{}, … ({} in all)", items[..8].join(", "), items.len()) }
}

/// One language model's config (the file, a `text_config`, an encoder or a decoder): its spec
/// (unnamed) and its `model_type`.
fn read_tower(
    fields: &Fields,
    model_type: Option<&str>,
    opts: &ReadOptions,
    notes: &mut Vec<String>,
) -> Result<(ModelSpec, String), ModelError> {
    let mut model_type = fields.string("model_type")?.or(model_type).map(str::to_string);
    if let Some((from, to)) = ALIASES.iter().find(|(a, _)| Some(*a) == model_type.as_deref()) {
        notes.push(format!("model_type {from} (remote code) is read as {to}, as Transformers reads it"));
        model_type = Some((*to).to_string());
    }
    let t = model_type.as_deref().and_then(facts);
    let derived = derive(fields, model_type.as_deref(), opts, notes)?;
    if let (Some(t), Some(mt)) = (t, model_type.as_deref())
        && t.packing == PackingFact::FourRowPositions
    {
        notes.push(format!(
            "{mt} reads packed documents only from 4-row position ids (text positions first, then M-RoPE's three)"
        ));
    }
    let positions = t.map_or("max_position_embeddings", |t| t.positions);
    let max_position_embeddings = match fields.obj.get(positions) {
        None => model_type.as_deref().and_then(default_max_positions).or_else(|| t.and_then(|t| t.positions_default)),
        Some(Value::Null) => None,
        Some(_) => fields.positive(positions).ok().flatten(),
    };
    let spec = ModelSpec {
        name: String::new(),
        model_type: model_type.clone().unwrap_or_default(),
        causal: derived.causal,
        layers: derived.layers,
        max_position_embeddings,
        encoder: derived.encoder,
        notes: Vec::new(),
        // A type the table does not know is assumed to detect packing, as Transformers' causal
        // mask builders do when given position ids.
        packing: match t.map(|t| t.packing) {
            None | Some(PackingFact::Detected) => Packing::Detected,
            Some(PackingFact::Ignored | PackingFact::FourRowPositions) => Packing::Ignored,
            Some(PackingFact::CrossingConvolutions) => Packing::Unmodelled,
        },
    };
    Ok((spec, model_type.unwrap_or_default()))
}

/// The config classes' `num_hidden_layers` defaults (Transformers 5.24).
fn default_layers(model_type: &str) -> Option<u64> {
    Some(match model_type {
        "gemma2" | "gemma3_text" => 26,
        "cohere2" => 40,
        "gpt_oss" => 36,
        "llama4_text" | "qwen3_next" => 48,
        "modernbert" => 22,
        "longformer" | "bert" | "roberta" => 12,
        "mistral" | "ministral" | "mixtral" | "phi3" | "llama" | "olmo3" | "qwen2" | "qwen3" => 32,
        _ => return None,
    })
}

/// The config classes' `max_position_embeddings` defaults (Transformers 5.24).
fn default_max_positions(model_type: &str) -> Option<u64> {
    Some(match model_type {
        "mistral" | "ministral" | "mixtral" | "llama4_text" => 131_072,
        "gemma2" | "cohere2" | "modernbert" => 8192,
        "gemma3_text" | "gpt_oss" => 131_072,
        "olmo3" | "llama" => 2048,
        "qwen2" | "qwen3" | "qwen3_next" => 32_768,
        "phi3" => 4096,
        "longformer" | "bert" | "roberta" => 512,
        _ => return None,
    })
}

fn derive(
    f: &Fields,
    model_type: Option<&str>,
    opts: &ReadOptions,
    notes: &mut Vec<String>,
) -> Result<Derived, ModelError> {
    // AutoConfig reads a `mistral` file that has a `layer_types` key as `ministral`.
    let model_type = match model_type {
        Some("mistral") if f.has("layer_types") => Some("ministral"),
        other => other,
    };
    let known = model_type.filter(|t| SUPPORTED_MODEL_TYPES.contains(t));
    let mut derived = match (known, model_type.and_then(facts)) {
        (Some(t), _) => {
            if t != "gemma3_text" && t != "gemma2" {
                refuse_foreign(f, Some(t))?;
            }
            derive_known(f, t)?
        }
        (None, Some(facts)) if facts.role != Role::Unknown => derive_table(f, &facts, notes)?,
        _ => derive_unknown(f, model_type, opts)?,
    };
    if let Some(d) = opts.direction {
        let causal = d == Direction::Causal;
        if causal != derived.causal && !opts.from_wrapper {
            notes.push(format!(
                "read as {} because you said so (--{}); the config says otherwise",
                if causal { "a decoder (causal)" } else { "an encoder (bidirectional)" },
                if causal { "causal" } else { "bidirectional" }
            ));
        }
        derived.causal = causal;
    }
    Ok(derived)
}

/// A type the table knows: its direction, its layer count field, and its layers from
/// `layer_types` or, in a file without them, from the legacy fields its config class reads.
fn derive_table(f: &Fields, t: &TypeFacts, notes: &mut Vec<String>) -> Result<Derived, ModelError> {
    let mt = t.model_type;
    if t.role == Role::EncoderDecoder {
        return derive_encoder_decoder(f, t, notes);
    }
    let causal = match t.role {
        Role::Decoder => true,
        Role::IsDecoder => f.boolean("is_decoder")? == Some(true),
        Role::XlmCausal => f.boolean("causal")? == Some(true),
        _ => false,
    };
    let count = |field: &str, default: Option<u64>| -> Result<u64, ModelError> {
        counted(f, field, default)?.ok_or_else(|| ModelError::Missing {
            field: f.name(field),
            reason: "is not set (the number of layers)".to_string(),
        })
    };
    if mt == "lxmert" {
        return lxmert(f, notes);
    }
    let mut params = Params::common(f)?;
    let types = match f.layer_types()? {
        Some(types) => {
            if f.has(t.layers) {
                check_count(f, "layer_types", types.len(), Some(count(t.layers, t.layers_default)?))?;
            }
            types
        }
        None => legacy_types(f, t, &mut params, || count(t.layers, t.layers_default))?,
    };
    if mt == "big_bird" {
        refuse_block_sparse(f)?;
    }
    let mut types = types;
    // The `__post_init__` of these config classes: "Last layer must use `full_attention`", forced
    // whatever the file lists.
    let last_full = ["embedding_gemma2_text", "gemma4_text", "gemma4_unified_text", "diffusion_gemma_text"];
    if last_full.contains(&mt)
        && let Some(last) = types.last_mut()
    {
        *last = "full_attention".to_string();
    }
    // Gemma 4, DiffusionGemma and Step3.7 read `use_bidirectional_attention` (Gemma 3's is
    // derived above): `"vision"` makes only image tokens bidirectional (the text's reach is as
    // read); `true` / `"all"` flips the attention's `is_causal`, whose effect differs by attention
    // path, so it is refused rather than guessed. Gemma 1 (PaliGemma's and π0's language model)
    // keeps its causal masks with the field set, as the live test measures: it is read causal.
    let reads_bidirectional = ["gemma4_text", "gemma4_unified_text", "diffusion_gemma_text", "step3p5"];
    if reads_bidirectional.contains(&mt) {
        match f.get("use_bidirectional_attention") {
            None | Some(Value::Bool(false)) => {}
            Some(Value::String(v)) if v == "vision" => {}
            Some(v) => {
                return Err(ModelError::Unsupported {
                    field: f.name("use_bidirectional_attention"),
                    reason: format!(
                        "{} is not modelled for {mt} (it flips the attention's is_causal, whose effect depends on the \
                         attention path); leave it out, with --bidirectional to read every layer both ways",
                        clip(&v.to_string())
                    ),
                });
            }
        }
    }
    if mt == "reformer" {
        return Err(ModelError::Unsupported {
            field: f.name("attn_layers"),
            reason:
                "Reformer's LSH layers hash the data and its local layers look one chunk back cyclically, which no \
                     layer kind describes; give the mask a run uses to hasseflow analyze (a .npy or a mask_mod) instead"
                    .to_string(),
        });
    }
    if mt == "dory" {
        return dory(f, &types, &params);
    }
    if t.per_layer_masks {
        return Ok(Derived { layers: per_layer_windows(f, t, &types, causal)?, causal, encoder: None });
    }
    if mt == "sam3_lite_text_text_model" {
        return repmixer_ends(f, types.len(), notes);
    }
    if !causal && let Ok(w) = params.window.as_mut() {
        // `sliding_window_bidirectional_overlay(w)` is inclusive, `|q - k| <= w`: the seam's
        // bidirectional `Sliding { window: w + 1 }` (UltraBERT, NeoMME).
        *w = w.saturating_add(1);
    }
    if mt.starts_with("inkling") {
        return inkling(f, &types, &params, notes);
    }
    if mt == "hrm_text" {
        // Two stacks run in cycles: `num_layers_per_stack * H_cycles * (L_cycles + 1)` layer
        // applications, each a causal full layer (`HrmTextModel.forward`).
        let per = f.positive_or("num_layers_per_stack", 16)?;
        let h = f.positive_or("H_cycles", 2)?;
        let l = f.positive_or("L_cycles", 3)?;
        let n = per.saturating_mul(h).saturating_mul(l.saturating_add(1));
        if n > MAX_LAYERS {
            return Err(ModelError::TooManyLayers { field: f.name("num_layers_per_stack"), count: n, max: MAX_LAYERS });
        }
        notes.push(format!(
            "{h} H cycles of {l} L-stack runs and one H-stack run, {per} layers each: {n} layer applications"
        ));
        return Ok(Derived { layers: vec![LayerKind::Full; n as usize], causal: true, encoder: None });
    }
    if types.iter().any(|t| t == "reference_sliding_attention") {
        notes.push(
            "reference_sliding_attention reads every earlier token of the prompt (the reference): exact for a forward \
             pass; tokens generated after it read a sliding window"
                .to_string(),
        );
        let types: Vec<String> = types
            .iter()
            .map(|t| if t == "reference_sliding_attention" { "full_attention".to_string() } else { t.clone() })
            .collect();
        return Ok(Derived { layers: kinds(f, &types, &params)?, causal, encoder: None });
    }
    Ok(Derived { layers: kinds(f, &types, &params)?, causal, encoder: None })
}

/// BigBird's `block_sparse` (the class default): global, sliding and random blocks, which no
/// layer kind describes. Transformers runs it as full attention up to
/// `(5 + 2 num_random_blocks) block_size` tokens.
fn refuse_block_sparse(f: &Fields) -> Result<(), ModelError> {
    if f.string("attention_type")?.unwrap_or("block_sparse") == "block_sparse" {
        return Err(ModelError::Unsupported {
            field: f.name("attention_type"),
            reason:
                "block_sparse (global, sliding and random blocks) is not modelled; give original_full, which is what \
                     Transformers runs for sequences up to (5 + 2 x num_random_blocks) x block_size tokens"
                    .to_string(),
        });
    }
    Ok(())
}

/// A type that builds each layer's mask from that layer's `per_layer_config` (NeoMME, Transformers
/// 5.24): a layer whose own `sliding_window` (its entry's, else the top-level one) is set gets a
/// sliding mask of that window, else a full one, whatever `layer_types` says; a bidirectional
/// window `w` reads `|q - k| <= w` (`Sliding { window: w + 1 }`). A file without
/// `per_layer_config` gets NeoMME's `__post_init__` default: `full_attention` layers none, every
/// second `sliding_attention` layer `default_long_sliding_window` (1024).
fn per_layer_windows(f: &Fields, t: &TypeFacts, types: &[String], causal: bool) -> Result<Vec<LayerKind>, ModelError> {
    let key = "per_layer_config";
    let (top_default, long) = if t.model_type == "neomme" { (Some(256), Some(1024)) } else { (None, None) };
    let top = sliding_window_or(f, top_default)?;
    let per = match f.get(key) {
        None => None,
        Some(Value::Object(o)) => Some(o),
        Some(v) => return Err(f.wrong(key, "an object of per-layer settings", v)),
    };
    let mut sliding_index = 0;
    let mut out = Vec::with_capacity(types.len());
    for (i, name) in types.iter().enumerate() {
        if name != "sliding_attention" && name != "full_attention" {
            out.extend(kinds(f, std::slice::from_ref(name), &Params::common(f)?)?);
            continue;
        }
        let entry_key = i.to_string();
        let window = match per.map(|o| o.get(&entry_key)) {
            Some(Some(Value::Object(e))) if e.contains_key("sliding_window") => {
                let field = Fields { obj: e, prefix: "" };
                field.positive("sliding_window").map_err(|e| match e {
                    ModelError::NotPositive { value, .. } => {
                        ModelError::NotPositive { field: f.name(&format!("{key}.{i}.sliding_window")), value }
                    }
                    ModelError::WrongType { expected, got, .. } => {
                        ModelError::WrongType { field: f.name(&format!("{key}.{i}.sliding_window")), expected, got }
                    }
                    other => other,
                })?
            }
            Some(Some(Value::Object(_))) | Some(None) => top,
            Some(Some(v)) => return Err(f.wrong(&format!("{key}.{i}"), "an object of layer settings", v)),
            // No per_layer_config: the class's default.
            None if name == "full_attention" => None,
            None => {
                sliding_index += 1;
                if sliding_index % 2 == 0 { long.or(top) } else { top }
            }
        };
        out.push(match window {
            Some(w) => LayerKind::Sliding { window: if causal { w } else { w.saturating_add(1) } },
            None => LayerKind::Full,
        });
    }
    Ok(out)
}

/// Dory: the file lists each layer as an (attention, mlp) pair of blocks, and counts blocks;
/// the model runs its input layers, its recurrent layers `n_recurrent_loops` times, then its
/// output layers (`DoryConfig.__post_init__`, `DoryModel.forward`).
fn dory(f: &Fields, types: &[String], params: &Params) -> Result<Derived, ModelError> {
    let paired = types.iter().any(|t| t == "mlp");
    let attention: Vec<String> = if paired { types.iter().step_by(2).cloned().collect() } else { types.to_vec() };
    let halve = |v: u64| if paired { v / 2 } else { v };
    let input = halve(f.positive_or("n_input_layers", 8)?) as usize;
    let output = halve(f.positive_or("n_output_layers", 8)?) as usize;
    let loops = f.positive_or("n_recurrent_loops", 2)?;
    if input + output > attention.len() {
        return Err(ModelError::LayerCount {
            field: f.name("n_input_layers"),
            listed: input + output,
            declared: attention.len() as u64,
        });
    }
    let recurrent = &attention[input..attention.len() - output];
    if (recurrent.len() as u64).saturating_mul(loops) > MAX_LAYERS {
        return Err(ModelError::TooManyLayers { field: f.name("n_recurrent_loops"), count: loops, max: MAX_LAYERS });
    }
    let mut run: Vec<String> = attention[..input].to_vec();
    for _ in 0..loops {
        run.extend_from_slice(recurrent);
    }
    run.extend_from_slice(&attention[attention.len() - output..]);
    Ok(Derived { layers: kinds(f, &run, params)?, causal: true, encoder: None })
}

/// LXMERT's text stream (`LxmertEncoder`): `l_layers` language layers (default 9), then `x_layers`
/// cross-modality layers (default 5), whose text attends to every text position and to the visual
/// features; its `num_hidden_layers` is a dict of the three stacks (`r_layers` is the vision's).
fn lxmert(f: &Fields, notes: &mut Vec<String>) -> Result<Derived, ModelError> {
    let language = f.positive_or("l_layers", 9)?;
    let cross = f.positive_or("x_layers", 5)?;
    let n = language.saturating_add(cross);
    if n > MAX_LAYERS {
        return Err(ModelError::TooManyLayers { field: f.name("x_layers"), count: n, max: MAX_LAYERS });
    }
    notes.push(format!(
        "the text stream: {language} language layers, then {cross} cross-modality layers, whose text also reads \
         the visual features (not positions of this sequence)"
    ));
    Ok(Derived { layers: vec![LayerKind::Full; n as usize], causal: false, encoder: None })
}

/// SAM 3 LiteText's text encoder (`Sam3LiteTextTextModel`): with `use_repmixer_blocks` (default
/// true) its first and last layers are RepMixer blocks, a depthwise convolution of kernel
/// `repmixer_kernel_size` (default 11, padding `k // 2`, centred) mixing the tokens, then a second
/// one in the convolutional feed-forward: `|q - k| <= 2 (k // 2)`, the seam's bidirectional
/// `Sliding { window: 2 (k // 2) + 1 }`. The other layers attend over every position.
fn repmixer_ends(f: &Fields, n: usize, notes: &mut Vec<String>) -> Result<Derived, ModelError> {
    let mut layers = vec![LayerKind::Full; n];
    if f.boolean("use_repmixer_blocks")?.unwrap_or(true) && n > 0 {
        let k = f.positive_or("repmixer_kernel_size", 11)?;
        if k % 2 == 0 {
            return Err(ModelError::Unsupported {
                field: f.name("repmixer_kernel_size"),
                reason: format!(
                    "{k} is even: a convolution padded by k // 2 then outputs more positions than it reads"
                ),
            });
        }
        let conv = LayerKind::Sliding { window: 2 * (k / 2) + 1 };
        layers[0] = conv;
        layers[n - 1] = conv;
        notes.push(format!(
            "the first and last layers are RepMixer blocks (two centred depthwise convolutions of kernel {k}), shown \
             as a window of {} positions each side",
            2 * (k / 2)
        ));
    }
    Ok(Derived { layers, causal: false, encoder: None })
}

/// Inkling: every layer runs its attention (sliding over `sliding_window_size` in a
/// `hybrid_sliding` layer, full in a `hybrid` one) after short causal convolutions of its keys
/// and values, then two more (after the attention and after the MLP), each of kernel
/// `conv_kernel_size`: a sliding layer reaches `w - 1 + 3 (kc - 1)` positions back.
fn inkling(f: &Fields, types: &[String], params: &Params, notes: &mut Vec<String>) -> Result<Derived, ModelError> {
    let kc = match f.get("sconv_kernel_size") {
        Some(_) => f.positive_or("sconv_kernel_size", 4)?,
        None => f.positive_or("conv_kernel_size", 4)?,
    };
    let w = match f.get("sliding_window_size") {
        Some(_) => Ok(f.positive_or("sliding_window_size", 512)?),
        None => params.window.clone(),
    };
    notes.push(
        "Inkling layers add short causal convolutions around the attention: the sliding layers' window is widened by \
         them; with packed documents the convolutions also cross document boundaries, which is not shown"
            .to_string(),
    );
    let widened =
        Params { window: w.map(|w| w + 3 * (kc - 1)), window_field: f.name("sliding_window_size"), chunk: None };
    let types: Vec<String> = types
        .iter()
        .map(|t| match t.as_str() {
            "hybrid_sliding" => "sliding_attention".to_string(),
            "hybrid" => "full_attention".to_string(),
            other => other.to_string(),
        })
        .collect();
    Ok(Derived { layers: kinds(f, &types, &widened)?, causal: true, encoder: None })
}

/// `num_hidden_layers` under its own name (`n_layer`, `num_layers`, …), or the class default.
fn counted(f: &Fields, field: &str, default: Option<u64>) -> Result<Option<u64>, ModelError> {
    let n = match f.obj.get(field) {
        None => default,
        Some(Value::Null) => None,
        Some(v) => f.positive_value(field, Some(v))?,
    };
    if let Some(n) = n
        && n > MAX_LAYERS
    {
        return Err(ModelError::TooManyLayers { field: f.name(field), count: n, max: MAX_LAYERS });
    }
    Ok(n)
}

/// The layer types of a file without `layer_types`, as the config class derives them.
fn legacy_types(
    f: &Fields,
    t: &TypeFacts,
    params: &mut Params,
    count: impl Fn() -> Result<u64, ModelError>,
) -> Result<Vec<String>, ModelError> {
    let strings = |key: &str| -> Result<Option<Vec<String>>, ModelError> {
        let Some(v) = f.get(key) else { return Ok(None) };
        let Value::Array(items) = v else { return Err(f.wrong(key, "a list of strings", v)) };
        if items.len() as u64 > MAX_LAYERS {
            return Err(ModelError::TooManyLayers { field: f.name(key), count: items.len() as u64, max: MAX_LAYERS });
        }
        items
            .iter()
            .map(|i| i.as_str().map(str::to_string).ok_or_else(|| f.wrong(key, "a list of strings", i)))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    };
    let indices = |key: &str| -> Result<Option<Vec<u64>>, ModelError> {
        let Some(v) = f.get(key) else { return Ok(None) };
        let Value::Array(items) = v else { return Err(f.wrong(key, "a list of layer indices", v)) };
        items
            .iter()
            .map(|i| i.as_u64().ok_or_else(|| f.wrong(key, "a list of layer indices", i)))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    };
    let mt = t.model_type;
    let every = |name: &str| -> Result<Vec<String>, ModelError> { Ok(vec![name.to_string(); count()? as usize]) };
    // A per-layer list under another name (Zamba, Nemotron-H, Granite-hybrid's `layers_block_type`).
    if let Some(list) = strings("layers_block_type")? {
        check_count(f, "layers_block_type", list.len(), counted(f, t.layers, None)?)?;
        return Ok(list);
    }
    match mt {
        "mamba" | "mamba2" | "falcon_mamba" | "rwkv" | "xlstm" => every("linear_attention"),
        // Attention and a Mamba-2 mixer side by side in every layer: their union.
        "falcon_h1" => every("hybrid"),
        // `EmbeddingGemma2TextConfig.__post_init__`, from the builder-only `sliding_window_pattern`.
        "embedding_gemma2_text" => {
            let pattern = f.positive_or("sliding_window_pattern", 6)?;
            Ok(periodic(count()?, pattern, "sliding_attention", "full_attention"))
        }
        "jamba" | "zamba" => {
            let period = f.positive_or("attn_layer_period", if mt == "jamba" { 8 } else { 6 })?;
            let offset = f.int("attn_layer_offset")?.unwrap_or(4);
            // `JambaConfig.validate_architecture`: each offset below its period.
            if mt == "jamba" {
                let expert_period = f.positive_or("expert_layer_period", 2)?;
                let expert_offset = f.int("expert_layer_offset")?.unwrap_or(1);
                for (key, what, offset, period) in [
                    ("attn_layer_offset", "attention", offset, period),
                    ("expert_layer_offset", "expert", expert_offset, expert_period),
                ] {
                    if offset >= period as i64 {
                        return Err(ModelError::Missing {
                            field: f.name(key),
                            reason: format!(
                                "{what} layer offset ({offset}) must be smaller than {what} layer period ({period}), \
                                 as Transformers' JambaConfig refuses it"
                            ),
                        });
                    }
                }
            }
            let attention = if mt == "zamba" { "hybrid" } else { "full_attention" };
            let n = count()?;
            Ok((0..n)
                .map(|i| {
                    let hit = if mt == "jamba" {
                        i as i64 % period as i64 == offset
                    } else {
                        i as i64 % period as i64 == offset % period as i64 && i as i64 >= offset
                    };
                    if hit { attention } else { "linear_attention" }.to_string()
                })
                .collect())
        }
        "bamba" => {
            let at = indices("attn_layer_indices")?.unwrap_or_default();
            Ok((0..count()?)
                .map(|i| if at.contains(&i) { "full_attention" } else { "linear_attention" }.to_string())
                .collect())
        }
        "zamba2" => {
            let at = indices("hybrid_layer_ids")?.unwrap_or_default();
            Ok((0..count()?).map(|i| if at.contains(&i) { "hybrid" } else { "linear_attention" }.to_string()).collect())
        }
        "lfm2" | "lfm2_moe" => {
            let n = count()?;
            let at = indices("full_attn_idxs")?.unwrap_or_else(|| (0..n).collect());
            Ok((0..n).map(|i| if at.contains(&i) { "full_attention" } else { "conv" }.to_string()).collect())
        }
        "nemotron_h" => {
            let key = "hybrid_override_pattern";
            let Some(pattern) = f.string(key)? else { return every("full_attention") };
            pattern
                .chars()
                .map(|c| match c {
                    'M' => Ok("linear_attention".to_string()),
                    '*' => Ok("full_attention".to_string()),
                    '-' | 'E' => Ok("mlp".to_string()),
                    other => {
                        Err(ModelError::Unsupported { field: f.name(key), reason: format!("unknown block {other:?}") })
                    }
                })
                .collect()
        }
        "recurrent_gemma" => {
            let blocks = strings("block_types")?
                .unwrap_or_else(|| vec!["recurrent".into(), "recurrent".into(), "attention".into()]);
            if blocks.is_empty() {
                return Err(ModelError::Missing { field: f.name("block_types"), reason: "is empty".to_string() });
            }
            params.window = Ok(f.positive_or("attention_window_size", 2048)?);
            params.window_field = f.name("attention_window_size");
            Ok((0..count()? as usize)
                .map(|i| {
                    if blocks[i % blocks.len()] == "attention" { "sliding_attention" } else { "linear_attention" }
                        .to_string()
                })
                .collect())
        }
        "gpt_neo" => {
            params.window = Ok(f.positive_or("window_size", 256)?);
            params.window_field = f.name("window_size");
            let key = "attention_types";
            let Some(v) = f.get(key) else {
                return Ok((0..count()?)
                    .map(|i| if i % 2 == 0 { "full_attention" } else { "sliding_attention" }.to_string())
                    .collect());
            };
            gpt_neo_types(f, key, v)
        }
        _ if t.window_all && f.get("sliding_window").is_some() => every("sliding_attention"),
        _ if !t.uniform.is_empty() => every(t.uniform),
        _ => every("full_attention"),
    }
}

/// GPT-Neo's `attention_types`: `[[["global", "local"], 12]]` repeats the list 12 times.
fn gpt_neo_types(f: &Fields, key: &str, v: &Value) -> Result<Vec<String>, ModelError> {
    let bad = || f.wrong(key, "a list of [[\"global\" | \"local\", ...], count] pairs", v);
    let Value::Array(groups) = v else { return Err(bad()) };
    let mut out = Vec::new();
    for g in groups {
        let Some([Value::Array(names), reps]) = g.as_array().map(Vec::as_slice) else { return Err(bad()) };
        let reps = reps.as_u64().ok_or_else(bad)?;
        if (out.len() as u64).saturating_add(reps.saturating_mul(names.len() as u64)) > MAX_LAYERS {
            return Err(ModelError::TooManyLayers { field: f.name(key), count: u64::MAX, max: MAX_LAYERS });
        }
        for _ in 0..reps {
            for name in names {
                out.push(match name.as_str() {
                    Some("global") => "full_attention".to_string(),
                    Some("local") => "sliding_attention".to_string(),
                    _ => return Err(bad()),
                });
            }
        }
    }
    Ok(out)
}

/// An encoder-decoder (T5, BART, Whisper): full bidirectional encoder layers, causal decoder
/// layers; windows where the type has them are refused, not guessed.
fn derive_encoder_decoder(f: &Fields, t: &TypeFacts, notes: &mut Vec<String>) -> Result<Derived, ModelError> {
    let enc_n = counted(f, t.encoder_layers, t.encoder_default)?.ok_or_else(|| ModelError::Missing {
        field: f.name(t.encoder_layers),
        reason: "is not set (the number of encoder layers)".to_string(),
    })?;
    // T5's `num_decoder_layers` defaults to `num_layers`.
    let dec_default = if t.layers == "num_decoder_layers" { Some(enc_n) } else { t.layers_default };
    let dec_n = counted(f, t.layers, dec_default)?.ok_or_else(|| ModelError::Missing {
        field: f.name(t.layers),
        reason: "is not set (the number of decoder layers)".to_string(),
    })?;
    let _ = notes;
    match t.model_type {
        "bigbird_pegasus" => refuse_block_sparse(f)?,
        "pegasus_x" => {
            return Err(ModelError::Unsupported {
                field: f.name("block_size"),
                reason: "PEGASUS-X's encoder (local blocks staggered every other layer, plus global tokens) is not \
                         modelled; give the encoder's mask to hasseflow analyze (a .npy or a mask_mod) instead"
                    .to_string(),
            });
        }
        _ => {}
    }
    let encoder_layers = if t.model_type == "longt5" {
        // `LongT5LocalAttention`: `|q - k| <= local_radius`; `transient-global` adds the sums of
        // every block (`global_block_size`) as keys, so every position reaches every other.
        let attention = f.string("encoder_attention_type")?.unwrap_or("local");
        let radius = f.int("local_radius")?.unwrap_or(127).max(0) as u64;
        let kind = match attention {
            "local" => LayerKind::Sliding { window: radius + 1 },
            "transient-global" => LayerKind::Full,
            other => {
                return Err(ModelError::Unsupported {
                    field: f.name("encoder_attention_type"),
                    reason: format!("{:?} is neither local nor transient-global", clip(other)),
                });
            }
        };
        vec![kind; enc_n as usize]
    } else if t.model_type == "led" {
        // LED's encoder is Longformer's.
        longformer_layers(f, enc_n)?
    } else {
        vec![LayerKind::Full; enc_n as usize]
    };
    Ok(Derived {
        layers: vec![LayerKind::Full; dec_n as usize],
        causal: true,
        encoder: Some(EncoderSpec { layers: encoder_layers, causal: false, context: 0 }),
    })
}

/// A type the pinned Transformers does not have: read from `layer_types`, in the direction the
/// file states (`is_causal`, `is_decoder`) or the user gives; never assumed.
fn derive_unknown(f: &Fields, model_type: Option<&str>, opts: &ReadOptions) -> Result<Derived, ModelError> {
    refuse_foreign(f, None)?;
    let Some(types) = f.layer_types()? else {
        return Err(match model_type {
            Some(t) => ModelError::UnknownModelType { field: f.name("model_type"), model_type: clip(t) },
            None => ModelError::MissingModelType,
        });
    };
    let declared = f.layer_count(None)?;
    check_count(f, "layer_types", types.len(), declared)?;
    // The layer types are checked first: their refusal is the more specific one.
    kinds(f, &types, &Params::common(f)?)?;
    let stated = match (f.boolean("is_causal")?, f.boolean("is_decoder")?) {
        (Some(c), _) => Some(c),
        (None, Some(true)) => Some(true),
        _ => None,
    };
    let causal = match (opts.direction, stated) {
        (Some(d), _) => d == Direction::Causal,
        (None, Some(c)) => c,
        (None, None) => {
            return Err(ModelError::Missing {
                field: f.name("is_causal"),
                reason: format!(
                    "model type {:?} is not among the text model types hasseflow knows from Transformers \
                     {TRANSFORMERS}, and the file does not say whether it is a decoder or an encoder: give is_causal \
                     (or is_decoder), or --causal / --bidirectional",
                    clip(model_type.unwrap_or("(none)"))
                ),
            });
        }
    };
    let mut params = Params::common(f)?;
    if !causal && let Ok(w) = params.window.as_mut() {
        *w = w.saturating_add(1); // inclusive bidirectional windows, as in `derive_table`
    }
    Ok(Derived { layers: kinds(f, &types, &params)?, causal, encoder: None })
}

/// The Transformers release the table and the derivations follow.
pub(super) const TRANSFORMERS: &str = "5.24";

fn refuse_foreign(f: &Fields, model_type: Option<&str>) -> Result<(), ModelError> {
    for (key, reason) in FOREIGN_FIELDS {
        let allowed = matches!(
            (*key, model_type),
            ("local_attention", Some("modernbert")) | ("attention_window", Some("longformer"))
        );
        if allowed || !f.has(key) {
            continue;
        }
        let harmless = match (*key, f.obj.get(*key)) {
            (_, Some(Value::Null)) => true,
            ("use_bidirectional_attention", Some(Value::Bool(false))) => true,
            ("is_causal", Some(Value::Bool(true))) => true,
            ("attention_type", Some(Value::String(s))) => s == "original_full",
            _ => false,
        };
        if !harmless {
            return Err(ModelError::Unsupported { field: f.name(key), reason: (*reason).to_string() });
        }
    }
    Ok(())
}

fn check_count(f: &Fields, field: &str, listed: usize, declared: Option<u64>) -> Result<(), ModelError> {
    match declared {
        Some(d) if d != listed as u64 => Err(ModelError::LayerCount { field: f.name(field), listed, declared: d }),
        _ => Ok(()),
    }
}

/// The count Transformers uses: `num_hidden_layers` or the class default.
fn count(f: &Fields, model_type: &str) -> Result<u64, ModelError> {
    f.layer_count(default_layers(model_type))?
        .ok_or_else(|| ModelError::Missing { field: f.name("num_hidden_layers"), reason: "is null".to_string() })
}

/// The layer types Transformers uses: the file's `layer_types` when given (checked against the
/// count), else `derive(count)`.
fn types_or(
    f: &Fields,
    model_type: &str,
    derive: impl Fn(u64) -> Result<Vec<String>, ModelError>,
) -> Result<Vec<String>, ModelError> {
    let n = count(f, model_type)?;
    match f.layer_types()? {
        Some(types) => {
            check_count(f, "layer_types", types.len(), Some(n))?;
            Ok(types)
        }
        None => derive(n),
    }
}

/// `(i + 1) % period != 0 → a, else b` (Gemma, Cohere2, OLMo 3, gpt-oss, Qwen3-Next).
fn periodic(n: u64, period: u64, a: &str, b: &str) -> Vec<String> {
    (0..n).map(|i| if (i + 1) % period != 0 { a } else { b }.to_string()).collect()
}

fn sliding_window_or(f: &Fields, default: Option<u64>) -> Result<Option<u64>, ModelError> {
    match f.obj.get("sliding_window") {
        None => Ok(default),
        Some(_) => f.positive("sliding_window"),
    }
}

fn window_param(f: &Fields, window: Option<u64>) -> Result<u64, String> {
    window.ok_or_else(|| if f.has("sliding_window") { "is null".to_string() } else { "is not set".to_string() })
}

fn derive_known(f: &Fields, t: &str) -> Result<Derived, ModelError> {
    let causal_full = |n: u64| Derived { layers: vec![LayerKind::Full; n as usize], causal: true, encoder: None };
    match t {
        "llama" => Ok(causal_full(count(f, t)?)),
        "bert" | "roberta" => {
            let n = count(f, t)?;
            // `is_decoder: true` (BertLMHeadModel, an EncoderDecoderModel's decoder): causal.
            let causal = f.boolean("is_decoder")? == Some(true);
            Ok(Derived { layers: vec![LayerKind::Full; n as usize], causal, encoder: None })
        }
        // MistralModel & co. pick the mask from `sliding_window` alone, for every layer
        // (`create_causal_mask if self.config.sliding_window is None else
        // create_sliding_window_causal_mask`); a file with `layer_types` is read as `ministral`.
        "ministral" => {
            let window = sliding_window_or(f, Some(4096))?;
            let every = if window.is_some() { "sliding_attention" } else { "full_attention" };
            let types = types_or(f, t, |n| Ok(vec![every.to_string(); n as usize]))?;
            let params =
                Params { window: window_param(f, window), window_field: f.name("sliding_window"), chunk: None };
            Ok(Derived { layers: kinds(f, &types, &params)?, causal: true, encoder: None })
        }
        "mistral" | "mixtral" | "phi3" => {
            let n = count(f, t)?;
            let default = if t == "mistral" { Some(4096) } else { None };
            let kind = match sliding_window_or(f, default)? {
                Some(w) => LayerKind::Sliding { window: w },
                None => LayerKind::Full,
            };
            Ok(Derived { layers: vec![kind; n as usize], causal: true, encoder: None })
        }
        "gemma2" | "cohere2" | "olmo3" | "gpt_oss" => {
            if t == "gemma2" {
                if f.boolean("use_bidirectional_attention")? == Some(true) {
                    return Err(ModelError::Unsupported {
                        field: f.name("use_bidirectional_attention"),
                        reason: "Gemma 2 in Transformers 5.24 flips is_causal but keeps causal masks".to_string(),
                    });
                }
                refuse_foreign(
                    &Fields { obj: &without(f.obj, "use_bidirectional_attention"), prefix: f.prefix },
                    Some(t),
                )?;
            }
            let (period, default_window) = match t {
                "gemma2" => (2, 4096),
                "cohere2" => (f.positive_or("sliding_window_pattern", 4)?, 4096),
                "olmo3" => (4, 4096),
                _ => (2, 128),
            };
            let types = types_or(f, t, |n| Ok(periodic(n, period, "sliding_attention", "full_attention")))?;
            let params = Params {
                window: window_param(f, sliding_window_or(f, Some(default_window))?),
                window_field: f.name("sliding_window"),
                chunk: None,
            };
            Ok(Derived { layers: kinds(f, &types, &params)?, causal: true, encoder: None })
        }
        "gemma3_text" => {
            let bidirectional = f.boolean("use_bidirectional_attention")? == Some(true);
            refuse_foreign(&Fields { obj: &without(f.obj, "use_bidirectional_attention"), prefix: f.prefix }, Some(t))?;
            let pattern = f.positive_or("sliding_window_pattern", 6)?;
            let types = types_or(f, t, |n| Ok(periodic(n, pattern, "sliding_attention", "full_attention")))?;
            let window = sliding_window_or(f, Some(4096))?;
            // `use_bidirectional_attention`: the config stores `w // 2 + 1` and the sliding
            // layers read `|q - k| < w // 2 + 1` (`_bidirectional_window_overlay`, or-ed with
            // the causal window): exactly `Sliding { window: w // 2 + 1 }` without causality.
            let window = if bidirectional { window.map(|w| w / 2 + 1) } else { window };
            let params =
                Params { window: window_param(f, window), window_field: f.name("sliding_window"), chunk: None };
            Ok(Derived { layers: kinds(f, &types, &params)?, causal: !bidirectional, encoder: None })
        }
        "qwen2" | "qwen3" => {
            // `self.sliding_window = self.sliding_window if self.use_sliding_window else None`.
            let use_sliding = f.boolean("use_sliding_window")?.unwrap_or(false);
            let window = if use_sliding { sliding_window_or(f, Some(4096))? } else { None };
            let max_window_layers = match f.int("max_window_layers")? {
                Some(m) => m,
                None if f.has("max_window_layers") => {
                    return Err(ModelError::Missing {
                        field: f.name("max_window_layers"),
                        reason: "is null".to_string(),
                    });
                }
                None => 28,
            };
            let types = types_or(f, t, |n| {
                Ok((0..n)
                    .map(|i| {
                        if window.is_some() && (i as i64) >= max_window_layers {
                            "sliding_attention"
                        } else {
                            "full_attention"
                        }
                        .to_string()
                    })
                    .collect())
            })?;
            let params = Params {
                window: window.ok_or_else(|| {
                    if use_sliding {
                        "is null".to_string()
                    } else {
                        "is ignored since use_sliding_window is false".to_string()
                    }
                }),
                window_field: f.name("sliding_window"),
                chunk: None,
            };
            Ok(Derived { layers: kinds(f, &types, &params)?, causal: true, encoder: None })
        }
        "qwen3_next" => {
            let interval = f.positive_or("full_attention_interval", 4)?;
            let types = types_or(f, t, |n| Ok(periodic(n, interval, "linear_attention", "full_attention")))?;
            let params =
                Params { window: Err("is not set".to_string()), window_field: f.name("sliding_window"), chunk: None };
            Ok(Derived { layers: kinds(f, &types, &params)?, causal: true, encoder: None })
        }
        "llama4_text" => {
            let n = count(f, t)?;
            let chunk = match f.obj.get("attention_chunk_size") {
                None => Some(8192),
                Some(_) => f.positive("attention_chunk_size")?,
            };
            let types = match f.layer_types()? {
                Some(types) => {
                    check_count(f, "layer_types", types.len(), Some(n))?;
                    types
                }
                None => {
                    let rope = no_rope_layers(f, n)?;
                    check_count(f, "no_rope_layers", rope.len(), Some(n))?;
                    rope.iter()
                        .map(|&r| if r && chunk.is_some() { "chunked_attention" } else { "full_attention" }.to_string())
                        .collect()
                }
            };
            let params =
                Params { window: Err("is not set".to_string()), window_field: f.name("sliding_window"), chunk };
            Ok(Derived { layers: kinds(f, &types, &params)?, causal: true, encoder: None })
        }
        "modernbert" => {
            let every = f.positive_or("global_attn_every_n_layers", 3)?;
            let local = f.positive_or("local_attention", 128)?;
            // `sliding_window` is a property, `local_attention // 2`; the eager/SDPA mask is
            // `sliding_window_bidirectional_overlay`: `|q - k| <= local_attention // 2`, which is
            // `Sliding { window: local_attention // 2 + 1 }` in the seam's `q - w < k < q + w`.
            if local / 2 == 0 {
                return Err(ModelError::NotPositive {
                    field: f.name("local_attention"),
                    value: format!("{local} (half of it is 0)"),
                });
            }
            let types = types_or(f, t, |n| {
                Ok((0..n)
                    .map(|i| if i % every != 0 { "sliding_attention" } else { "full_attention" }.to_string())
                    .collect())
            })?;
            let params = Params { window: Ok(local / 2 + 1), window_field: f.name("local_attention"), chunk: None };
            Ok(Derived { layers: kinds(f, &types, &params)?, causal: false, encoder: None })
        }
        "longformer" => {
            let layers = longformer_layers(f, count(f, t)?)?;
            Ok(Derived { layers, causal: false, encoder: None })
        }
        // The composites ("gemma3", "llama4") are read through their text_config above.
        _ => Err(ModelError::UnknownModelType { field: f.name("model_type"), model_type: clip(t) }),
    }
}

/// Longformer's (and LED's encoder's) `n` layers from `attention_window`, an int for every layer
/// or one per layer (default 512): `_sliding_chunks_query_key_matmul` with
/// `one_sided_attn_window_size = attention_window // 2` keeps `|q - k| <= attention_window / 2`.
fn longformer_layers(f: &Fields, n: u64) -> Result<Vec<LayerKind>, ModelError> {
    let key = "attention_window";
    let windows: Vec<u64> = match f.obj.get(key) {
        None => vec![512; n as usize],
        Some(Value::Array(items)) => {
            check_count(f, key, items.len(), Some(n))?;
            items.iter().map(|v| longformer_window(f, v)).collect::<Result<_, _>>()?
        }
        Some(v) => vec![longformer_window(f, v)?; n as usize],
    };
    Ok(windows.iter().map(|w| LayerKind::Sliding { window: w / 2 + 1 }).collect())
}

fn longformer_window(f: &Fields, v: &Value) -> Result<u64, ModelError> {
    let w = f.positive_value("attention_window", Some(v))?.ok_or_else(|| ModelError::Missing {
        field: f.name("attention_window"),
        reason: "has a null entry".to_string(),
    })?;
    if w % 2 != 0 {
        return Err(ModelError::Unsupported {
            field: f.name("attention_window"),
            reason: format!("{w} is odd; Longformer requires an even window"),
        });
    }
    Ok(w)
}

/// Llama 4's `no_rope_layers` (1 = RoPE layer = chunked), or the default from
/// `no_rope_layer_interval` (an empty or absent list means the default).
fn no_rope_layers(f: &Fields, n: u64) -> Result<Vec<bool>, ModelError> {
    let key = "no_rope_layers";
    if let Some(v) = f.get(key) {
        let Value::Array(items) = v else { return Err(f.wrong(key, "a list of 0/1", v)) };
        if !items.is_empty() {
            return items
                .iter()
                .map(|item| match item.as_u64() {
                    Some(0) => Ok(false),
                    Some(1) => Ok(true),
                    _ => Err(f.wrong(key, "a list of 0/1", item)),
                })
                .collect();
        }
    }
    let interval = f.positive_or("no_rope_layer_interval", 4)?;
    Ok((0..n).map(|i| (i + 1) % interval != 0).collect())
}

fn without(obj: &Map<String, Value>, key: &str) -> Map<String, Value> {
    let mut copy = obj.clone();
    copy.remove(key);
    copy
}

/// Layer type names to kinds (`conv` layers at the kernel width the file gives).
fn kinds(f: &Fields, types: &[String], params: &Params) -> Result<Vec<LayerKind>, ModelError> {
    let field = f.name("layer_types");
    let width = CONV_FIELDS.iter().find(|k| f.get(k).is_some());
    types
        .iter()
        .enumerate()
        .map(|(index, t)| match t.as_str() {
            "sliding_attention" | "local" => match &params.window {
                Ok(w) => Ok(LayerKind::Sliding { window: *w }),
                Err(why) => Err(ModelError::Missing {
                    field: params.window_field.clone(),
                    reason: format!("{why}, but layer {index} is sliding_attention"),
                }),
            },
            "chunked_attention" => match params.chunk {
                Some(c) => Ok(LayerKind::Chunked { size: c }),
                None => Err(ModelError::Missing {
                    field: f.name("attention_chunk_size"),
                    reason: format!("is not set, but layer {index} is chunked_attention"),
                }),
            },
            "conv" => match width {
                Some(key) => Ok(LayerKind::Conv { width: f.positive(key)?.unwrap_or(1) }),
                None => Err(ModelError::Missing {
                    field: f.name("conv_L_cache"),
                    reason: format!("is not set, but layer {index} is conv (give the kernel width)"),
                }),
            },
            other => kind_of(other).map_err(|reason| ModelError::UnknownLayerType {
                field: field.clone(),
                index,
                value: clip(other),
                reason,
            }),
        })
        .collect()
}
