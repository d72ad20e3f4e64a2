//! `hasseflow_core::model` against the live Transformers library: the fixture
//! `fixtures/hf_model_expectations.json` is written by tests/python/gen_model_expectations.py
//! (`--check` regenerates it with the installed library). Every gallery config and every synthetic
//! config must give exactly the layers Transformers derives, or be refused naming the field the
//! fixture names; every sampled row of a real `masking_utils` mask function must equal
//! `LayerKind::allows`. Plus one test per refusal.

#[path = "support/job_contract.rs"]
mod job_contract;

use hasseflow_core::model::{self, ModelError, PackingError};
use hasseflow_core::pattern::{LayerKind, ModelSpec};
use serde_json::Value;

const FIXTURE: &str = include_str!("fixtures/hf_model_expectations.json");

fn fixture() -> Vec<Value> {
    let v: Value = serde_json::from_str(FIXTURE).expect("fixture is JSON");
    v["entries"].as_array().expect("entries").clone()
}

fn spec_of(entry: &Value) -> Result<ModelSpec, ModelError> {
    let name = entry["name"].as_str().expect("name");
    if entry["source"] == "gallery" {
        model::load_gallery(name)
    } else {
        model::parse_config(&entry["config"].to_string(), name)
    }
}

fn labels(spec: &ModelSpec) -> Vec<String> {
    spec.layers.iter().map(LayerKind::label).collect()
}

#[test]
fn every_fixture_entry_matches_transformers() {
    let entries = fixture();
    assert!(entries.len() >= 50, "fixture has the gallery and the synthetic configs");
    let mut checked = 0;
    for e in &entries {
        let name = e["name"].as_str().expect("name");
        let got = spec_of(e);
        if let Some(field) = e["refusal_field"].as_str() {
            let err = got.expect_err(name).to_string();
            assert!(err.starts_with(field), "{name}: refusal should name {field}: {err}");
            assert_eq!(err.lines().count(), 1, "{name}: one line: {err}");
            continue;
        }
        let spec = got.unwrap_or_else(|err| panic!("{name}: refused: {err}"));
        let want: Vec<String> =
            e["layers"].as_array().expect("layers").iter().map(|l| l.as_str().expect("label").to_string()).collect();
        assert_eq!(labels(&spec), want, "{name}: layers");
        assert_eq!(spec.causal, e["causal"].as_bool().expect("causal"), "{name}: causal");
        assert_eq!(
            spec.max_position_embeddings,
            e["max_position_embeddings"].as_u64(),
            "{name}: max_position_embeddings"
        );
        checked += 1;
    }
    assert!(checked >= 45, "{checked} accepted entries checked");
}

#[test]
fn layer_kinds_mean_what_masking_utils_computes() {
    let mut rows_checked = 0;
    for e in fixture() {
        let Some(samples) = e["mask_samples"].as_array() else { continue };
        let causal = e["causal"].as_bool().expect("causal");
        let spec = match spec_of(&e) {
            Ok(s) => s,
            Err(_) => continue, // refused entries are checked above
        };
        for sample in samples {
            let label = sample["layer"].as_str().expect("layer");
            let kind = spec.layers.iter().find(|k| k.label() == label).expect("the sampled kind is one of the layers");
            for row in sample["rows"].as_array().expect("rows") {
                let q = row["q"].as_u64().expect("q");
                let (lo, hi) = (row["lo"].as_u64().expect("lo"), row["hi"].as_u64().expect("hi"));
                let mut ours: Vec<[u64; 2]> = Vec::new();
                for k in lo..=hi {
                    if kind.allows(q, k, causal) {
                        match ours.last_mut() {
                            Some(last) if last[1] + 1 == k => last[1] = k,
                            _ => ours.push([k, k]),
                        }
                    }
                }
                let theirs: Vec<[u64; 2]> = row["allowed"]
                    .as_array()
                    .expect("allowed")
                    .iter()
                    .map(|iv| [iv[0].as_u64().expect("lo"), iv[1].as_u64().expect("hi")])
                    .collect();
                assert_eq!(ours, theirs, "{}: {label} q={q}", e["name"]);
                rows_checked += 1;
            }
        }
    }
    assert!(rows_checked >= 40, "{rows_checked} rows");
}

#[test]
fn gallery_has_the_architectures_of_the_issue() {
    let names: Vec<&str> = model::gallery().iter().map(|e| e.name).collect();
    assert!(names.len() >= 10);
    for e in model::gallery() {
        assert!(e.source.starts_with("https://huggingface.co/") && e.source.ends_with("/config.json"), "{}", e.name);
        let spec = model::load_gallery(e.name).unwrap_or_else(|err| panic!("{}: {err}", e.name));
        assert_eq!(spec.name, e.name);
    }
    let g3 = model::load_gallery("gemma-3-27b-it").expect("gemma 3");
    assert_eq!(g3.layers.len(), 62);
    assert_eq!(g3.layers.iter().filter(|k| **k == LayerKind::Full).count(), 10);
    let scout = model::load_gallery("llama-4-scout-17b-16e").expect("scout");
    assert_eq!(scout.layers[3], LayerKind::Full);
    assert_eq!(scout.layers[0], LayerKind::Chunked { size: 8192 });
    assert!(matches!(model::load_gallery("nope"), Err(ModelError::UnknownGalleryName(_))));
}

/// The error message of a config, which must be one line starting with `field`.
fn refusal(config: &str, field: &str) -> ModelError {
    let err = model::parse_config(config, "t").expect_err(config);
    let msg = err.to_string();
    assert!(msg.starts_with(field), "{config}: expected a refusal naming {field}, got: {msg}");
    assert_eq!(msg.lines().count(), 1, "{msg}");
    err
}

#[test]
fn refusals_name_the_field() {
    let e = refusal(r#"{"model_type": "bloomish", "num_hidden_layers": 2}"#, "model_type");
    assert!(e.to_string().contains("\"bloomish\""), "{e}");
    refusal(r#"{"num_hidden_layers": 2}"#, "model_type");
    // Transformers' `JambaConfig` refuses an offset that is not below its period (checked with the
    // test venv's transformers: "attention layer offset (4) must be smaller than attention layer
    // period (4)"); a valid one is read.
    let e = refusal(
        r#"{"model_type": "jamba", "num_hidden_layers": 8, "attn_layer_period": 4, "attn_layer_offset": 4}"#,
        "attn_layer_offset",
    );
    assert!(
        e.to_string().contains("attention layer offset (4) must be smaller than attention layer period (4)"),
        "{e}"
    );
    refusal(
        r#"{"model_type": "jamba", "num_hidden_layers": 8, "expert_layer_period": 2, "expert_layer_offset": 2}"#,
        "expert_layer_offset",
    );
    assert!(
        model::parse_config(
            r#"{"model_type": "jamba", "num_hidden_layers": 8, "attn_layer_period": 4, "attn_layer_offset": 3}"#,
            "t"
        )
        .is_ok()
    );
    refusal(r#"{"model_type": "x", "layer_types": ["full_attention", "nope"]}"#, "layer_types[1]");
    refusal(r#"{"model_type": "x", "layer_types": ["full_attention", "hybrid_sliding"]}"#, "layer_types[1]");
    refusal(r#"{"model_type": "x", "layer_types": ["full_attention", 3]}"#, "layer_types[1]");
    refusal(r#"{"model_type": "x", "layer_types": "full_attention"}"#, "layer_types");
    refusal(r#"{"model_type": "gemma2", "num_hidden_layers": 2, "sliding_window": 0}"#, "sliding_window");
    refusal(r#"{"model_type": "gemma2", "num_hidden_layers": 2, "sliding_window": -4}"#, "sliding_window");
    refusal(r#"{"model_type": "gemma2", "num_hidden_layers": 2, "sliding_window": 4.5}"#, "sliding_window");
    refusal(
        r#"{"model_type": "gemma3", "text_config": {"sliding_window_pattern": 0}}"#,
        "text_config.sliding_window_pattern",
    );
    refusal(
        r#"{"model_type": "llama4", "text_config": {"attention_chunk_size": 0}}"#,
        "text_config.attention_chunk_size",
    );
    refusal(r#"{"model_type": "x", "num_hidden_layers": 3, "layer_types": ["full_attention"]}"#, "layer_types");
    refusal(r#"{"model_type": "gemma2", "num_hidden_layers": 3, "layer_types": ["full_attention"]}"#, "layer_types");
    refusal(r#"{"model_type": "llama4_text", "num_hidden_layers": 3, "no_rope_layers": [1, 0]}"#, "no_rope_layers");
    refusal(r#"{"model_type": "longformer", "num_hidden_layers": 3, "attention_window": [2, 2]}"#, "attention_window");
    refusal(r#"{"model_type": "longformer", "attention_window": 7}"#, "attention_window");
    refusal(r#"{"model_type": "x", "layer_types": ["sliding_attention"]}"#, "sliding_window");
    refusal(r#"{"model_type": "x", "layer_types": ["chunked_attention"]}"#, "attention_chunk_size");
    refusal(r#"{"model_type": "gpt_oss", "num_hidden_layers": 2, "sliding_window": null}"#, "sliding_window");
    refusal(
        r#"{"model_type": "qwen2", "num_hidden_layers": 1, "layer_types": ["sliding_attention"]}"#,
        "sliding_window",
    );
    refusal(
        r#"{"model_type": "x", "layer_types": ["full_attention"], "attention_type": "block_sparse"}"#,
        "attention_type",
    );
    // Transformers 5.24's mask builders never read `is_causal` from a config: a field that no
    // layer uses never stops a read (nor does Qwen2-MoE's `sliding_window: 0` without sliding layers).
    // `use_bidirectional_attention: true` flips Gemma 4's `is_causal` (refused, naming the
    // field); `"vision"` concerns image tokens only; Gemma 1 keeps causal masks with it.
    refusal(
        r#"{"model_type": "gemma4_text", "num_hidden_layers": 2, "use_bidirectional_attention": "all"}"#,
        "use_bidirectional_attention",
    );
    let gemma4 = model::parse_config(
        r#"{"model_type": "gemma4_text", "num_hidden_layers": 2, "sliding_window": 8, "use_bidirectional_attention": "vision"}"#,
        "t",
    );
    assert!(gemma4.is_ok_and(|s| s.causal));
    let gemma = model::parse_config(
        r#"{"model_type": "gemma", "num_hidden_layers": 2, "use_bidirectional_attention": true}"#,
        "t",
    )
    .expect("read causal");
    assert!(gemma.causal);
    let llama = model::parse_config(r#"{"model_type": "llama", "is_causal": false}"#, "t").expect("ignored field");
    assert!(llama.causal);
    let moe = model::parse_config(
        r#"{"model_type": "qwen2_moe", "num_hidden_layers": 2, "sliding_window": 0, "use_sliding_window": false}"#,
        "t",
    )
    .expect("unused window");
    assert_eq!(moe.layers, vec![LayerKind::Full; 2]);
    refusal(r#"{"model_type": "gemma2", "use_bidirectional_attention": true}"#, "use_bidirectional_attention");
    refusal(r#"{"model_type": "mistral", "num_hidden_layers": 100000}"#, "num_hidden_layers");
    refusal(r#"{"model_type": "mistral", "num_hidden_layers": 0}"#, "num_hidden_layers");
    refusal(r#"{"model_type": 7}"#, "model_type");
    refusal(r#"{"model_type": "gemma3", "text_config": 1}"#, "text_config");
    refusal("[1, 2]", "config");
    refusal("{\"model_type\": \"llama\"", "config: malformed JSON");
    let huge = format!("{{\"model_type\": \"llama\", \"pad\": \"{}\"}}", "x".repeat(model::MAX_CONFIG_BYTES));
    refusal(&huge, "config");
    assert!(matches!(model::parse_config_bytes(&[0xff, 0xfe], "t"), Err(ModelError::Json(_))));
}

/// Issue 19: a composite's text_config with `layer_types` was refused as "unknown model type and
/// no layer_types". A language model's type there (`gemma3_text`, or none) reads the list; the
/// wrapper's own type (`gemma3`, `llama4`) is refused for what it is, naming
/// `text_config.model_type`; an unknown type there reads `layer_types` like a top-level one.
#[test]
fn composite_text_configs_with_layer_types_are_read_or_refused_for_the_true_reason() {
    let types = r#""layer_types": ["sliding_attention", "sliding_attention", "full_attention"]"#;
    let expected = vec![LayerKind::Sliding { window: 4 }, LayerKind::Sliding { window: 4 }, LayerKind::Full];
    for text_type in [r#""model_type": "gemma3_text","#, ""] {
        let config = format!(
            r#"{{"model_type": "gemma3", "text_config": {{{text_type} "num_hidden_layers": 3, "sliding_window": 4, {types}}}}}"#
        );
        let spec = model::parse_config(&config, "t").unwrap_or_else(|e| panic!("{config}: {e}"));
        assert_eq!(spec.layers, expected, "{config}");
        assert_eq!(spec.model_type, "gemma3_text");
    }
    // Without num_hidden_layers the class default (26) disagrees with the list: that is the reason.
    let e = refusal(
        &format!(r#"{{"model_type": "gemma3", "text_config": {{"model_type": "gemma3_text", {types}}}}}"#),
        "text_config.layer_types",
    );
    assert!(e.to_string().contains("num_hidden_layers is 26"), "{e}");
    for (outer, inner, text) in
        [("gemma3", "gemma3", "gemma3_text"), ("llama4", "llama4", "llama4_text"), ("gemma3", "llama4", "llama4_text")]
    {
        let config = format!(
            r#"{{"model_type": "{outer}", "text_config": {{"model_type": "{inner}", "num_hidden_layers": 3, "sliding_window": 4, {types}}}}}"#
        );
        let e = refusal(&config, "text_config.model_type: not supported");
        let msg = e.to_string();
        assert!(!msg.contains("unknown model type") && !msg.contains("no layer_types"), "{msg}");
        assert!(msg.contains(&format!("{text:?}")) && msg.contains("multimodal wrapper"), "{msg}");
    }
    // Another language model's type in the text config is derived as that type...
    let spec = model::parse_config(
        r#"{"model_type": "gemma3", "text_config": {"model_type": "mistral", "num_hidden_layers": 2, "sliding_window": 8}}"#,
        "t",
    )
    .expect("mistral text config");
    assert_eq!(spec.layers, vec![LayerKind::Sliding { window: 8 }; 2]);
    // ...an unknown one through its layer_types, and without them the message names the field.
    let spec = model::parse_config(
        &format!(
            r#"{{"model_type": "gemma3", "text_config": {{"model_type": "future", "is_causal": true, "sliding_window": 4, {types}}}}}"#
        ),
        "t",
    )
    .expect("unknown text type with layer_types");
    assert_eq!(spec.layers, expected);
    refusal(
        r#"{"model_type": "llama4", "text_config": {"model_type": "future", "num_hidden_layers": 2}}"#,
        "text_config.model_type: unknown model type \"future\" and no layer_types",
    );
    // An unknown type is clipped in the message, not echoed in full.
    let long = "y".repeat(10_000);
    let e = refusal(&format!(r#"{{"model_type": "{long}", "num_hidden_layers": 2}}"#), "model_type");
    assert!(e.to_string().len() < 300, "{e}");
}

#[test]
fn current_convention_configs_of_unknown_types_are_read_in_the_direction_stated() {
    let text = r#"{"model_type": "future", "sliding_window": 8, "attention_chunk_size": 4,
            "layer_types": ["sliding_attention", "chunked_attention", "linear_attention", "mamba", "attention"]}"#;
    // No statement of direction: refused, naming the missing fact (never read as causal).
    let e = refusal(text, "is_causal: model type \"future\" is not among the text model types hasseflow knows");
    assert!(e.to_string().contains("--causal / --bidirectional"), "{e}");
    // The user's statement...
    let opts = model::ReadOptions { direction: Some(model::Direction::Bidirectional), ..Default::default() };
    let spec = model::parse_config_with(text, "f", &opts).expect("stated by the user");
    assert!(!spec.causal);
    // ...or the file's.
    let spec =
        model::parse_config(&text.replacen('{', r#"{"is_causal": true, "#, 1), "f").expect("layer_types suffice");
    assert_eq!(
        spec.layers,
        vec![
            LayerKind::Sliding { window: 8 },
            LayerKind::Chunked { size: 4 },
            LayerKind::Linear,
            LayerKind::Linear,
            LayerKind::Full
        ]
    );
    assert!(spec.causal);
    assert_eq!(spec.max_position_embeddings, None);
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = hasseflow_core::rng::SplitMix64::new(11);
    let seeds = [
        r#"{"model_type": "gemma2", "num_hidden_layers": 3}"#,
        r#"{"model_type": "llama4", "text_config": {"no_rope_layers": [1, 0]}}"#,
        r#"{"model_type": "longformer", "attention_window": [2, 4]}"#,
    ];
    for round in 0..3000 {
        let mut bytes = seeds[round % seeds.len()].as_bytes().to_vec();
        for _ in 0..1 + rng.next_u64() % 4 {
            let i = (rng.next_u64() % bytes.len() as u64) as usize;
            bytes[i] = (rng.next_u64() % 128) as u8;
        }
        let _ = model::parse_config_bytes(&bytes, "fuzz");
        let text = String::from_utf8_lossy(&bytes);
        let _ = model::parse_segment_ids(&text, 4);
        let _ = model::parse_doc_lengths(&text, 4);
    }
}

#[test]
fn packing_helpers_give_overlay_docs() {
    assert_eq!(model::parse_doc_lengths("512,1024,512", 2048), Ok(vec![512, 1024, 512]));
    assert_eq!(model::parse_doc_lengths("512,1024", 2048), Err(PackingError::WrongSum { sum: 1536, n: 2048 }));
    assert_eq!(model::parse_segment_ids("[3,3,3,1,1,2]", 6), Ok(vec![3, 2, 1]));
    let e = model::parse_segment_ids("1 1 2 1", 4).expect_err("non-contiguous");
    assert!(e.to_string().starts_with("segments: id 1 at position 3"), "{e}");
}

/// Field names the reader knows (and a few it does not), for the structural mutations.
const FUZZ_KEYS: &[&str] = &[
    "model_type",
    "text_config",
    "layer_types",
    "num_hidden_layers",
    "sliding_window",
    "sliding_window_pattern",
    "attention_chunk_size",
    "no_rope_layers",
    "no_rope_layer_interval",
    "use_sliding_window",
    "max_window_layers",
    "full_attention_interval",
    "local_attention",
    "global_attn_every_n_layers",
    "attention_window",
    "use_bidirectional_attention",
    "max_position_embeddings",
    "attention_type",
    "attention_types",
    "is_causal",
    "is_decoder",
    "hidden_size",
];

/// A value a mutation writes: edge-case numbers, wrong types, layer type names, model types,
/// long lists and nesting.
fn fuzz_value(rng: &mut hasseflow_core::rng::SplitMix64) -> Value {
    use serde_json::json;
    let names = ["full_attention", "sliding_attention", "chunked_attention", "linear_attention", "mamba", "hybrid", ""];
    let pick = |rng: &mut hasseflow_core::rng::SplitMix64, list: &[&str]| list[rng.below(list.len())].to_string();
    match rng.below(16) {
        0 => json!(0),
        1 => json!(-1),
        2 => json!(1 + rng.below(9)),
        3 => json!([1u64 << 31, 1u64 << 32, u32::MAX as u64, u64::MAX, i64::MAX as u64, 4096, 4097][rng.below(7)]),
        4 => json!(i64::MIN),
        5 => json!([0.5, 1e300, -0.0, 2.0][rng.below(4)]),
        6 => Value::Null,
        7 => json!(rng.below(2) == 1),
        8 => json!(pick(rng, names.as_slice())),
        9 => json!(pick(rng, model::SUPPORTED_MODEL_TYPES)),
        10 => {
            // A layer list of a random length (around the counts the reader checks).
            let len = [0, 1, 2, 3, 26, 48, 4096, 4097][rng.below(8)];
            Value::Array((0..len).map(|_| json!(pick(rng, names.as_slice()))).collect())
        }
        11 => Value::Array((0..rng.below(50)).map(|_| json!(rng.below(3))).collect()),
        12 => json!({}),
        13 => json!([]),
        14 => json!("x".repeat(rng.below(200))),
        _ => {
            // Nesting well past what any reader expects (serde_json stops at depth 128).
            let depth = 1 + rng.below(200);
            let text = format!("{}0{}", "[".repeat(depth), "]".repeat(depth));
            serde_json::from_str(&text).unwrap_or(Value::Null)
        }
    }
}

/// One structural mutation of a parsed config: replace, delete or add a field (at the top or in
/// `text_config`), or replace a whole subtree.
fn mutate_value(v: &mut Value, rng: &mut hasseflow_core::rng::SplitMix64) {
    let target = match v {
        Value::Object(top) if rng.below(3) == 0 && top.get("text_config").is_some_and(Value::is_object) => {
            top.get_mut("text_config").unwrap_or_else(|| unreachable!())
        }
        other => other,
    };
    let Value::Object(obj) = target else {
        *target = fuzz_value(rng);
        return;
    };
    let key = FUZZ_KEYS[rng.below(FUZZ_KEYS.len())];
    match rng.below(4) {
        0 => {
            obj.remove(key);
        }
        1 if key == "text_config" => {
            let inner = serde_json::json!({ "model_type": model::SUPPORTED_MODEL_TYPES[rng.below(model::SUPPORTED_MODEL_TYPES.len())] });
            obj.insert(key.to_string(), inner);
        }
        _ => {
            obj.insert(key.to_string(), fuzz_value(rng));
        }
    }
}

/// Issue 19 ("fuzz every reader"): the gallery's configs mutated — byte edits of the text and
/// structural edits of the JSON (fields removed, added or given edge-case values, in the top
/// level and in `text_config`) — never panic, are read or refused with a short one-line message,
/// take a bounded time each, and what is read runs through the engine and the scaler at a small
/// context, with random documents. `HASSEFLOW_FUZZ_CONFIGS=N` sets the number of rounds (10,000 by
/// default: about 5 s in a debug build), `HASSEFLOW_FUZZ_SEED` the seed (19).
#[test]
fn mutated_gallery_configs_never_panic() {
    use hasseflow_core::model::{ModelRun, scale_model};
    use hasseflow_core::pattern::Overlays;
    let rounds: usize = std::env::var("HASSEFLOW_FUZZ_CONFIGS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let seed: u64 = std::env::var("HASSEFLOW_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(19);
    let mut rng = hasseflow_core::rng::SplitMix64::new(seed);
    let alphabet = b"{}[]\",:.-0123456789enulltruefalsx_ ";
    let (mut accepted, mut refused) = (0usize, 0usize);
    let mut slowest = std::time::Duration::ZERO;
    let started = std::time::Instant::now();
    for round in 0..rounds {
        let base = model::GALLERY[round % model::GALLERY.len()].config();
        let text = if round % 3 == 0 {
            let mut bytes = base.as_bytes().to_vec();
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(bytes.len().max(1));
                match rng.below(3) {
                    0 if !bytes.is_empty() => {
                        bytes.remove(i.min(bytes.len() - 1));
                    }
                    1 => bytes.insert(i.min(bytes.len()), alphabet[rng.below(alphabet.len())]),
                    _ => {
                        if let Some(b) = bytes.get_mut(i) {
                            *b = alphabet[rng.below(alphabet.len())];
                        }
                    }
                }
            }
            String::from_utf8_lossy(&bytes).into_owned()
        } else {
            let mut v: Value = serde_json::from_str(base).expect("gallery JSON");
            for _ in 0..1 + rng.below(3) {
                mutate_value(&mut v, &mut rng);
            }
            v.to_string()
        };
        let start = std::time::Instant::now();
        match model::parse_config(&text, "fuzz") {
            Ok(spec) => {
                accepted += 1;
                assert!(!spec.layers.is_empty() && spec.layers.len() as u64 <= model::MAX_LAYERS, "{text}");
                let _ = model::pattern_summary(&spec.layers);
                let (spec, n) =
                    ModelRun::positions(spec, 1 + rng.below(96) as u64, None).unwrap_or_else(|e| panic!("{text}: {e}"));
                let mut docs = Vec::new();
                let mut left = n;
                // (Documents are refused for an encoder-decoder and for a type whose convolutions
                // cross them, `Packing::Unmodelled`.)
                let packs = spec.encoder.is_none() && spec.packing != hasseflow_core::pattern::Packing::Unmodelled;
                while packs && rng.below(2) == 1 && left > 1 {
                    let d = 1 + rng.below(left as usize - 1) as u64;
                    docs.push(d);
                    left -= d;
                }
                if !docs.is_empty() {
                    docs.push(left);
                }
                let overlays = Overlays { docs, ..Overlays::default() };
                let run = ModelRun::compute("fuzz".into(), spec.clone(), n, overlays, &[n - 1])
                    .unwrap_or_else(|e| panic!("{text}: a config that was read must run: {e}"));
                assert_eq!(run.report.layers.len(), spec.layer_count());
                let _ = run.to_json();
                let _ = scale_model(&spec, 1 << 20, &[], 512).unwrap_or_else(|e| panic!("{text}: {e}"));
            }
            Err(e) => {
                refused += 1;
                let msg = e.to_string();
                assert!(!msg.is_empty() && !msg.contains('\n') && msg.len() < 600, "{text}: {msg}");
            }
        }
        let took = start.elapsed();
        slowest = slowest.max(took);
        assert!(took < std::time::Duration::from_secs(2), "{text}: {took:?}");
    }
    eprintln!(
        "{rounds} mutated configs: {accepted} read, {refused} refused, slowest {slowest:?}, total {:?}",
        started.elapsed()
    );
    assert!(accepted > rounds / 10 && refused > rounds / 10, "{accepted} read, {refused} refused");
}

/// A model run as a job keeps the job contract (the limit, then one step per layer) and gives
/// `ModelRun::compute`'s run; a query outside the context is refused before any step.
#[test]
fn the_model_job_gives_the_one_shot_run() {
    use hasseflow_core::model::{MAX_RUN_BYTES, ModelJob, ModelRun};
    use hasseflow_core::pattern::Overlays;
    for (name, n) in [("gemma-3-27b-it", 4096u64), ("mistral-7b-v0.1", 20_000)] {
        let spec = model::load_gallery(name).unwrap_or_else(|e| panic!("{e}"));
        let docs = Overlays { docs: vec![n / 2, n - n / 2], ..Overlays::default() };
        let stack = ModelRun::stack(&spec, n, &docs, 2, MAX_RUN_BYTES).unwrap_or_else(|e| panic!("{e}"));
        let job = ModelJob::new(&stack, "g".into(), spec.clone(), n, docs.clone(), &[0, n - 1])
            .unwrap_or_else(|e| panic!("{e}"));
        let depth = job.depth();
        assert_eq!(depth, spec.layer_count());
        let (run, seen) = job_contract::drive(job, name);
        assert_eq!(seen, (0..=depth).map(|d| (d, depth)).collect::<Vec<_>>(), "{name}");
        let once = ModelRun::compute("g".into(), spec.clone(), n, docs.clone(), &[0, n - 1]);
        assert_eq!(run.unwrap_or_else(|e| panic!("{e}")), once.unwrap_or_else(|e| panic!("{e}")), "{name}");
        let bad = ModelJob::new(&stack, "g".into(), spec, n, docs, &[n]);
        assert!(matches!(bad, Err(hasseflow_core::ReachError::QueryOutOfRange { .. })), "{name}");
    }
}
