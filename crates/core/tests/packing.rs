//! Packed documents as each Transformers model type really handles them (issue 29, item 5), and
//! per-layer windows (item 7). The facts come from the generated type table
//! (tests/python/gen_model_types.py); tests/python/test_models_live.py checks every type against
//! the real model with packed position ids. Here: what a run makes of them.

use hasseflow_core::model::{self, ModelError, ModelRun};
use hasseflow_core::pattern::{LayerKind, Overlays, Packing};
use serde_json::json;

/// A two-layer config of `model_type`, run at 128 tokens with documents of 50 and 78 (or none).
fn run(model_type: &str, docs: &[u64]) -> ModelRun {
    let config = json!({"model_type": model_type, "num_hidden_layers": 2}).to_string();
    let spec = model::parse_config(&config, "config.json").unwrap_or_else(|e| panic!("{model_type}: {e}"));
    let overlays = Overlays { docs: docs.to_vec(), ..Overlays::default() };
    ModelRun::compute("test".into(), spec, 128, overlays, &[0, 49, 50, 127])
        .unwrap_or_else(|e| panic!("{model_type}: {e}"))
}

/// The example: BERT builds `create_bidirectional_mask`, which never looks at position
/// ids, so the real model reads across packed documents; Llama passes them to
/// `create_causal_mask`, which keeps the documents apart; gpt-oss builds its causal masks without
/// them. The report says which, in its `packing` field and in one note.
#[test]
fn a_type_that_ignores_packing_reads_across_the_documents() {
    for (t, packing, leaks, first_row) in [
        ("bert", "ignored", true, json!([[0, 127]])),
        ("gpt_oss", "ignored", true, json!([[0, 127]])),
        ("llama", "detected", false, json!([[50, 127]])),
        ("mistral", "detected", false, json!([[50, 127]])),
    ] {
        let with = run(t, &[50, 78]);
        let v = with.to_json();
        assert_eq!((v["packing"].as_str(), with.leaks(), &v["leaks"]), (Some(packing), leaks, &json!(leaks)), "{t}");
        assert_eq!(v["docs"], json!([50, 78]), "{t}");
        assert_eq!(v["rows"]["127"][0], first_row, "{t}");
        let note = with.spec.notes.last().cloned().unwrap_or_default();
        if packing == "ignored" {
            assert_eq!(
                note,
                format!("{t} does not detect packed documents given as position ids: every layer reads across them")
            );
            assert_eq!(with.spec.packing, Packing::Ignored, "{t}");
            // Every layer's reach is the unpacked model's; only the leak check sees the documents.
            let without = run(t, &[]);
            assert_eq!(v["rows"], without.to_json()["rows"], "{t}");
            assert!(with.report.layers.iter().all(|l| l.leaks), "{t}");
            assert!(!without.leaks(), "{t}");
        } else {
            assert!(note.starts_with(&format!("{t} keeps packed documents apart when given them as position ids")));
            assert!(note.contains("no 2-D attention_mask and no cache (use_cache=False)"), "{note}");
            assert_eq!(v["rows"]["49"][1], json!([[0, 49]]), "{t}");
        }
        assert!(!note.contains('\n'), "{note}");
        // No documents, no note; the field still says what the type does.
        let alone = run(t, &[]);
        assert_eq!(alone.spec.notes, Vec::<String>::new(), "{t}");
        assert_eq!(alone.to_json()["packing"].as_str(), Some(packing), "{t}");
    }
}

/// A composite reads its text tower's fact (LLaVA's language model is Llama's); an unknown type
/// read from its `layer_types` is assumed to detect packing, as the causal builders do.
#[test]
fn composites_and_unknown_types_take_the_fact_of_the_model_read() {
    let llava = json!({"model_type": "llava", "text_config": {"model_type": "llama", "num_hidden_layers": 2}});
    let spec = model::parse_config(&llava.to_string(), "llava").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(spec.packing, Packing::Detected);
    let bert_decoder = json!({"model_type": "bert", "num_hidden_layers": 2, "is_decoder": true});
    let spec = model::parse_config(&bert_decoder.to_string(), "bert").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((spec.causal, spec.packing), (true, Packing::Ignored));
    let unknown = json!({"model_type": "mine", "layer_types": ["full_attention"], "is_causal": true});
    let spec = model::parse_config(&unknown.to_string(), "mine").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(spec.packing, Packing::Detected);
    // The field stays out of a serialized spec that detects packing (old files read the same).
    let text = serde_json::to_string(&spec).unwrap_or_else(|e| panic!("{e}"));
    assert!(!text.contains("packing"), "{text}");
}

/// Qwen2-VL's text model reads documents only from 4-row M-RoPE position ids, so 2-D ones (what
/// `DataCollatorWithFlattening` gives) are read across; RecurrentGemma's masks detect them, but the
/// convolution before its recurrence reads across each boundary: refused, in one line.
#[test]
fn m_rope_positions_are_read_across_and_crossing_convolutions_are_refused() {
    let qwen =
        json!({"model_type": "qwen2_vl", "text_config": {"model_type": "qwen2_vl_text", "num_hidden_layers": 2}});
    let spec = model::parse_config(&qwen.to_string(), "qwen").unwrap_or_else(|e| panic!("{e}"));
    let docs = Overlays { docs: vec![50, 78], ..Overlays::default() };
    let run = ModelRun::compute("test".into(), spec, 128, docs.clone(), &[127]).unwrap_or_else(|e| panic!("{e}"));
    assert!(run.leaks());
    assert_eq!(run.to_json()["packing"], json!("ignored"));
    // The reader says where the model finds documents; the run, that 2-D position ids are read across.
    let notes: Vec<&str> = run.spec.notes.iter().map(String::as_str).collect();
    assert!(
        notes.contains(
            &"qwen2_vl_text reads packed documents only from 4-row position ids (text positions first, then M-RoPE's three)"
        ),
        "{notes:?}"
    );
    assert_eq!(
        notes.last(),
        Some(&"qwen2_vl_text does not detect packed documents given as position ids: every layer reads across them")
    );
    let rg = json!({"model_type": "recurrent_gemma", "num_hidden_layers": 3});
    let spec = model::parse_config(&rg.to_string(), "rg").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(spec.packing, Packing::Unmodelled);
    let e = ModelRun::compute("test".into(), spec.clone(), 128, docs, &[]).expect_err("refused");
    assert_eq!(
        e.to_string(),
        "docs: packed documents are not modelled for recurrent_gemma: short convolutions beside its attention or \
         recurrence read a few positions across each document boundary, which no layer kind describes"
    );
    // One document is no packing: the run goes on.
    let one = Overlays { docs: vec![128], ..Overlays::default() };
    let run = ModelRun::compute("test".into(), spec, 128, one, &[]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run.to_json()["packing"], json!("unmodelled"));
}

fn neomme(extra: serde_json::Value) -> Result<Vec<LayerKind>, ModelError> {
    let mut config = json!({
        "model_type": "neomme",
        "num_hidden_layers": 4,
        "layer_types": ["sliding_attention", "sliding_attention", "full_attention", "sliding_attention"],
        "sliding_window": 8,
    });
    if let (Some(c), Some(e)) = (config.as_object_mut(), extra.as_object()) {
        c.extend(e.clone());
    }
    model::parse_config(&config.to_string(), "neomme").map(|s| s.layers)
}

/// NeoMME (Transformers 5.24) builds each layer's mask from its `per_layer_config`: a layer's own
/// `sliding_window` wins over the top-level one, `null` means full attention; its windows are
/// bidirectional and inclusive (`|q - k| <= w`: `Sliding { window: w + 1 }`).
#[test]
fn per_layer_windows_are_read() {
    let s = |w| LayerKind::Sliding { window: w };
    let per = json!({"per_layer_config": {"1": {"sliding_window": 12}, "2": {"sliding_window": null}, "3": {}}});
    assert_eq!(neomme(per), Ok(vec![s(9), s(13), LayerKind::Full, s(9)]));
    // A per_layer_config entry decides, whatever layer_types says.
    let flipped = json!({"per_layer_config": {"0": {"sliding_window": null}, "2": {"sliding_window": 4}}});
    assert_eq!(neomme(flipped), Ok(vec![LayerKind::Full, s(9), s(5), s(9)]));
    // No per_layer_config: the class's default, every second sliding layer 1024 wide.
    assert_eq!(neomme(json!({})), Ok(vec![s(9), s(1025), LayerKind::Full, s(9)]));
    let e = neomme(json!({"per_layer_config": {"1": {"sliding_window": 0}}})).expect_err("zero");
    assert_eq!(e.to_string(), "per_layer_config.1.sliding_window: must be a positive integer, got 0");
    let e = neomme(json!({"per_layer_config": {"1": {"sliding_window": "wide"}}})).expect_err("text");
    assert!(e.to_string().starts_with("per_layer_config.1.sliding_window: expected a positive integer"), "{e}");
    let e = neomme(json!({"per_layer_config": [1, 2]})).expect_err("a list");
    assert!(e.to_string().starts_with("per_layer_config: expected an object of per-layer settings"), "{e}");
    let e = neomme(json!({"per_layer_config": {"1": 5}})).expect_err("a number");
    assert!(e.to_string().starts_with("per_layer_config.1: expected an object of layer settings"), "{e}");
}

/// Random `per_layer_config` objects (entries at and past the layer count, windows of every JSON
/// type, edge numbers) never panic: each config is read or refused in one line naming the field.
#[test]
fn random_per_layer_configs_are_read_or_refused_in_one_line() {
    let mut rng = hasseflow_core::rng::SplitMix64::new(29);
    let values = [
        json!(null),
        json!(0),
        json!(1),
        json!(7),
        json!(-3),
        json!(1.5),
        json!("8"),
        json!(u64::MAX),
        json!([8]),
        json!({}),
        json!(true),
    ];
    let (mut read, mut refused) = (0, 0);
    for _ in 0..2000 {
        let mut per = serde_json::Map::new();
        for _ in 0..rng.below(6) {
            let key = match rng.below(4) {
                0 => "x".to_string(),
                1 => "-1".to_string(),
                _ => rng.below(6).to_string(),
            };
            let entry = match rng.below(4) {
                0 => values[rng.below(values.len())].clone(),
                1 => json!({}),
                _ => json!({"sliding_window": values[rng.below(values.len())].clone()}),
            };
            per.insert(key, entry);
        }
        match neomme(json!({ "per_layer_config": per })) {
            Ok(layers) => {
                assert_eq!(layers.len(), 4);
                read += 1;
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.starts_with("per_layer_config") && !msg.contains('\n'), "{msg}");
                refused += 1;
            }
        }
    }
    assert!(read > 200 && refused > 200, "{read} read, {refused} refused");
    // The inclusive bidirectional window `w + 1` saturates (it overflowed, a panic in debug builds,
    // for UltraBERT's and NeoMME's top-level window too).
    let top = json!({"model_type": "ultrabert", "num_hidden_layers": 1, "layer_types": ["sliding_attention"],
                     "sliding_window": u64::MAX});
    let spec = model::parse_config(&top.to_string(), "u").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(spec.layers, vec![LayerKind::Sliding { window: u64::MAX }]);
}
