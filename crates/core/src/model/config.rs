//! The config reader: field access with typed errors, and one derivation per `model_type`
//! mirroring the `__post_init__` of its Transformers 5.24 config class and the mask its modeling
//! file builds for each layer type (docs/MODELS.md has the table and the source lines).

use serde_json::{Map, Value};

use super::{MAX_LAYERS, ModelError};
use crate::pattern::{LayerKind, ModelSpec};

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

/// Composite (multimodal) configs whose attention lives in `text_config`, with the text
/// config's default `model_type`.
const COMPOSITES: &[(&str, &str)] = &[("gemma3", "gemma3_text"), ("llama4", "llama4_text")];

/// Fields that change the mask in ways no layer kind describes; refused when set to anything
/// but their harmless value (for model types that do not define them).
const FOREIGN_FIELDS: &[(&str, &str)] = &[
    ("attention_type", "block-sparse or other attention types (BigBird) are not modelled"),
    ("attention_types", "GPT-Neo style local/global lists are not modelled; give layer_types"),
    ("use_bidirectional_attention", "bidirectional variants are modelled only for gemma3_text"),
    ("is_causal", "masking_utils' is_causal power feature is not modelled"),
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
        let key = "num_hidden_layers";
        let n = match self.obj.get(key) {
            None => default,
            Some(Value::Null) => None,
            Some(v) => self.positive_value(key, Some(v))?,
        };
        if let Some(n) = n
            && n > MAX_LAYERS
        {
            return Err(ModelError::TooManyLayers { field: self.name(key), count: n, max: MAX_LAYERS });
        }
        Ok(n)
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

pub(super) fn spec_from_value(value: &Value, name: &str) -> Result<ModelSpec, ModelError> {
    let Value::Object(top) = value else {
        return Err(ModelError::WrongType {
            field: "config".to_string(),
            expected: "a JSON object",
            got: clip(&value.to_string()),
        });
    };
    let top = Fields { obj: top, prefix: "" };
    let top_type = top.string("model_type")?;

    // Composite configs keep the language model's attention in `text_config`.
    let empty = Map::new();
    let (fields, model_type) = match top_type.and_then(|t| COMPOSITES.iter().find(|(c, _)| *c == t)) {
        Some((_, text_default)) => {
            let obj = match top.obj.get("text_config") {
                None | Some(Value::Null) => &empty,
                Some(Value::Object(o)) => o,
                Some(v) => return Err(top.wrong("text_config", "a JSON object", v)),
            };
            let text = Fields { obj, prefix: "text_config." };
            let t = text.string("model_type")?.unwrap_or(text_default).to_string();
            // `CONFIG_MAPPING[text_config["model_type"]](**text_config)`: a composite type here
            // builds a second composite config, whose own (absent) text_config holds the layers,
            // so none of this text_config's fields would be read.
            if let Some((inner, inner_text)) = COMPOSITES.iter().find(|(c, _)| *c == t) {
                return Err(ModelError::Unsupported {
                    field: text.name("model_type"),
                    reason: format!(
                        "{inner:?} is the multimodal wrapper's type, not a language model's: Transformers would \
                         nest a second {inner} config and ignore this text_config's fields (layer_types \
                         included); give {inner_text:?} or leave model_type out"
                    ),
                });
            }
            (text, Some(t))
        }
        None => (top, top_type.map(str::to_string)),
    };

    let derived = derive(&fields, model_type.as_deref())?;
    let max_position_embeddings = match fields.obj.get("max_position_embeddings") {
        None => model_type.as_deref().and_then(default_max_positions),
        Some(Value::Null) => None,
        Some(_) => fields.positive("max_position_embeddings")?,
    };
    Ok(ModelSpec {
        name: name.to_string(),
        model_type: model_type.unwrap_or_default(),
        causal: derived.causal,
        layers: derived.layers,
        max_position_embeddings,
    })
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

fn derive(f: &Fields, model_type: Option<&str>) -> Result<Derived, ModelError> {
    // AutoConfig reads a `mistral` file that has a `layer_types` key as `ministral`.
    let model_type = match model_type {
        Some("mistral") if f.has("layer_types") => Some("ministral"),
        other => other,
    };
    let known = model_type.filter(|t| SUPPORTED_MODEL_TYPES.contains(t));
    if known != Some("gemma3_text") && known != Some("gemma2") {
        refuse_foreign(f, known)?;
    }
    match known {
        None => {
            // Unknown type: only the current convention can be read.
            let Some(types) = f.layer_types()? else {
                return Err(match model_type {
                    Some(t) => ModelError::UnknownModelType { field: f.name("model_type"), model_type: clip(t) },
                    None => ModelError::MissingModelType,
                });
            };
            let declared = f.layer_count(None)?;
            check_count(f, "layer_types", types.len(), declared)?;
            let params = Params {
                window: f.positive("sliding_window")?.ok_or_else(|| "is not set".to_string()),
                window_field: f.name("sliding_window"),
                chunk: f.positive("attention_chunk_size")?,
            };
            Ok(Derived { layers: kinds(f, &types, &params)?, causal: true })
        }
        Some(t) => derive_known(f, t),
    }
}

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
    let causal_full = |n: u64| Derived { layers: vec![LayerKind::Full; n as usize], causal: true };
    match t {
        "llama" => Ok(causal_full(count(f, t)?)),
        "bert" | "roberta" => {
            let n = count(f, t)?;
            if f.boolean("is_decoder")? == Some(true) {
                return Err(ModelError::Unsupported {
                    field: f.name("is_decoder"),
                    reason: "encoders used as decoders are not modelled".to_string(),
                });
            }
            Ok(Derived { layers: vec![LayerKind::Full; n as usize], causal: false })
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
            Ok(Derived { layers: kinds(f, &types, &params)?, causal: true })
        }
        "mistral" | "mixtral" | "phi3" => {
            let n = count(f, t)?;
            let default = if t == "mistral" { Some(4096) } else { None };
            let kind = match sliding_window_or(f, default)? {
                Some(w) => LayerKind::Sliding { window: w },
                None => LayerKind::Full,
            };
            Ok(Derived { layers: vec![kind; n as usize], causal: true })
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
            Ok(Derived { layers: kinds(f, &types, &params)?, causal: true })
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
            Ok(Derived { layers: kinds(f, &types, &params)?, causal: !bidirectional })
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
            Ok(Derived { layers: kinds(f, &types, &params)?, causal: true })
        }
        "qwen3_next" => {
            let interval = f.positive_or("full_attention_interval", 4)?;
            let types = types_or(f, t, |n| Ok(periodic(n, interval, "linear_attention", "full_attention")))?;
            let params =
                Params { window: Err("is not set".to_string()), window_field: f.name("sliding_window"), chunk: None };
            Ok(Derived { layers: kinds(f, &types, &params)?, causal: true })
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
            Ok(Derived { layers: kinds(f, &types, &params)?, causal: true })
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
            Ok(Derived { layers: kinds(f, &types, &params)?, causal: false })
        }
        "longformer" => {
            let n = count(f, t)?;
            let key = "attention_window";
            let windows: Vec<u64> = match f.obj.get(key) {
                None => vec![512; n as usize],
                Some(Value::Array(items)) => {
                    check_count(f, key, items.len(), Some(n))?;
                    items.iter().map(|v| longformer_window(f, v)).collect::<Result<_, _>>()?
                }
                Some(v) => vec![longformer_window(f, v)?; n as usize],
            };
            // `_sliding_chunks_query_key_matmul` with `one_sided_attn_window_size =
            // attention_window // 2`: `|q - k| <= attention_window / 2`.
            let layers = windows.iter().map(|w| LayerKind::Sliding { window: w / 2 + 1 }).collect();
            Ok(Derived { layers, causal: false })
        }
        // The composites ("gemma3", "llama4") are read through their text_config above.
        _ => Err(ModelError::UnknownModelType { field: f.name("model_type"), model_type: clip(t) }),
    }
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

/// Layer type names to kinds.
fn kinds(f: &Fields, types: &[String], params: &Params) -> Result<Vec<LayerKind>, ModelError> {
    let field = f.name("layer_types");
    types
        .iter()
        .enumerate()
        .map(|(index, t)| match t.as_str() {
            "full_attention" => Ok(LayerKind::Full),
            "linear_attention" => Ok(LayerKind::Linear),
            "sliding_attention" => match &params.window {
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
            "window_attention"
            | "indexed_attention"
            | "compressed_sparse_attention"
            | "heavily_compressed_attention"
            | "minimax_m3_sparse"
            | "conv"
            | "moe"
            | "hybrid"
            | "hybrid_sliding"
            | "reference_sliding_attention" => Err(ModelError::UnknownLayerType {
                field: field.clone(),
                index,
                value: clip(t),
                reason: "layer type known to Transformers but not modelled:",
            }),
            other => Err(ModelError::UnknownLayerType {
                field: field.clone(),
                index,
                value: clip(other),
                reason: "unknown layer type",
            }),
        })
        .collect()
}
