//! The text towers of contrastive, retrieval and detection models (CLIP, SigLIP, ALIGN, ...) and
//! the text-task encoders (MarkupLM, DPR, ...) that the type table reads since issue 29: each in the
//! direction its Transformers 5.24 modeling file builds (tests/python/test_models_live.py measures
//! every one of them against the real model).

use hasseflow_core::model::{self, ModelError};
use hasseflow_core::pattern::{LayerKind, ModelSpec};

fn read(config: &str) -> ModelSpec {
    model::parse_config(config, "t").unwrap_or_else(|e| panic!("{config}: {e}"))
}

#[test]
fn contrastive_text_towers_are_read_in_the_direction_transformers_builds() {
    // (composite, its text tower, causal, layers and positions by default)
    let cases = [
        ("clip", "clip_text_model", true, 12, Some(77)),
        ("clipseg", "clipseg_text_model", true, 12, Some(77)),
        ("groupvit", "groupvit_text_model", true, 12, Some(77)),
        ("owlvit", "owlvit_text_model", true, 12, Some(16)),
        ("owlv2", "owlv2_text_model", true, 12, Some(16)),
        ("xclip", "xclip_text_model", true, 12, Some(77)),
        ("metaclip_2", "metaclip_2_text_model", true, 12, Some(77)),
        ("siglip", "siglip_text_model", false, 12, Some(64)),
        ("siglip2", "siglip2_text_model", false, 12, Some(64)),
        ("align", "align_text_model", false, 12, Some(512)),
        ("altclip", "altclip_text_model", false, 24, Some(514)),
        ("chinese_clip", "chinese_clip_text_model", false, 12, Some(512)),
        ("clap", "clap_text_model", false, 12, Some(514)),
        ("flava", "flava_text_model", false, 12, Some(512)),
        ("sam3", "clip_text_model", true, 12, Some(77)),
    ];
    for (top, tower, causal, layers, positions) in cases {
        // A published file: the composite with its text_config (written without a model_type here).
        let spec = read(&format!(r#"{{"model_type": "{top}", "text_config": {{"num_hidden_layers": 3}}}}"#));
        assert_eq!((spec.causal, spec.layers.len()), (causal, 3), "{top}");
        assert!(spec.layers.iter().all(|k| *k == LayerKind::Full), "{top}: {:?}", spec.layers);
        assert_eq!(spec.model_type, tower, "{top}");
        assert!(
            spec.notes[0].contains(&format!("text_config ({tower}) of the {top} config")),
            "{top}: {:?}",
            spec.notes
        );
        // The class defaults, and the tower's own file.
        let spec = read(&format!(r#"{{"model_type": "{top}"}}"#));
        assert_eq!(
            (spec.causal, spec.layers.len(), spec.max_position_embeddings),
            (causal, layers, positions),
            "{top}"
        );
        let spec = read(&format!(r#"{{"model_type": "{tower}", "num_hidden_layers": 2}}"#));
        assert_eq!((spec.causal, spec.layers.len()), (causal, 2), "{tower}");
    }
}

#[test]
fn text_task_encoders_and_retrieval_encoders_are_read() {
    for t in ["markuplm", "bros", "lilt", "splinter", "layoutlmv3", "clvp_encoder"] {
        let spec = read(&format!(r#"{{"model_type": "{t}", "num_hidden_layers": 2}}"#));
        assert_eq!((spec.causal, spec.layers), (false, vec![LayerKind::Full; 2]), "{t}");
    }
    // DPR's encoders are BertModels, which read is_decoder.
    assert!(!read(r#"{"model_type": "dpr", "num_hidden_layers": 2}"#).causal);
    assert!(read(r#"{"model_type": "dpr", "num_hidden_layers": 2, "is_decoder": true}"#).causal);
    // OpenAI's privacy filter: every layer a bidirectional window of inclusive radius sliding_window.
    let spec = read(r#"{"model_type": "openai_privacy_filter", "num_hidden_layers": 3, "sliding_window": 128}"#);
    assert_eq!((spec.causal, spec.layers), (false, vec![LayerKind::Sliding { window: 129 }; 3]));
    let e = model::parse_config(r#"{"model_type": "openai_privacy_filter", "num_hidden_layers": 3}"#, "t")
        .expect_err("no window");
    assert!(e.to_string().starts_with("sliding_window: is not set, but layer 0 is sliding_attention"), "{e}");
}

#[test]
fn embedding_gemma2_is_read_as_the_bidirectional_encoder_it_is() {
    let spec = read(
        r#"{"model_type": "embedding_gemma2", "text_config": {"model_type": "embedding_gemma2_text",
            "num_hidden_layers": 3, "sliding_window": 512,
            "layer_types": ["sliding_attention", "sliding_attention", "full_attention"]}}"#,
    );
    // `sliding_window` is an inclusive radius: |q - k| <= 512.
    let w = LayerKind::Sliding { window: 513 };
    assert_eq!((spec.causal, spec.layers), (false, vec![w, w, LayerKind::Full]));
    assert_eq!(spec.model_type, "embedding_gemma2_text");
    let spec =
        read(r#"{"model_type": "embedding_gemma2_text", "num_hidden_layers": 1, "layer_types": ["full_attention"]}"#);
    assert!(!spec.causal);
    // The config class forces the last layer to full_attention, whatever the file lists...
    let spec = read(
        r#"{"model_type": "embedding_gemma2_text", "num_hidden_layers": 2, "sliding_window": 8,
            "layer_types": ["sliding_attention", "sliding_attention"]}"#,
    );
    assert_eq!(spec.layers, vec![LayerKind::Sliding { window: 9 }, LayerKind::Full]);
    // ...and derives the layers from sliding_window_pattern (default 6) when it lists none.
    let spec = read(r#"{"model_type": "embedding_gemma2_text", "num_hidden_layers": 7, "sliding_window": 8}"#);
    let w = LayerKind::Sliding { window: 9 };
    assert_eq!(spec.layers, vec![w, w, w, w, w, LayerKind::Full, LayerKind::Full]);
    let spec = read(
        r#"{"model_type": "embedding_gemma2_text", "num_hidden_layers": 4, "sliding_window": 8,
            "sliding_window_pattern": 2}"#,
    );
    assert_eq!(spec.layers, vec![w, LayerKind::Full, w, LayerKind::Full]);
}

#[test]
fn grounding_dino_says_its_text_tower_reads_phrases() {
    let spec =
        read(r#"{"model_type": "grounding-dino", "text_config": {"model_type": "bert", "num_hidden_layers": 2}}"#);
    assert!(!spec.causal);
    assert!(spec.notes.iter().any(|n| n.contains("phrases") && n.contains("static bound")), "{:?}", spec.notes);
}

#[test]
fn a_type_outside_the_table_is_never_said_to_be_outside_transformers() {
    // Canine is in Transformers 5.24 but not in the table (it downsamples characters to molecules).
    let text =
        r#"{"model_type": "canine", "num_hidden_layers": 2, "layer_types": ["full_attention", "full_attention"]}"#;
    let e = model::parse_config(text, "t").expect_err("no direction");
    let msg = e.to_string();
    assert!(matches!(e, ModelError::Missing { .. }), "{msg}");
    assert!(msg.contains("not among the text model types hasseflow knows"), "{msg}");
    assert!(!msg.contains("is not in Transformers"), "{msg}");
}

#[test]
fn towers_causal_only_with_an_attention_mask_say_so() {
    for (top, tower) in [("aimv2", "aimv2_text_model"), ("videoprism", "videoprism_text_model")] {
        let spec = read(&format!(r#"{{"model_type": "{top}", "text_config": {{"num_hidden_layers": 2}}}}"#));
        assert_eq!((spec.causal, spec.model_type.as_str()), (true, tower));
        assert!(spec.notes.iter().any(|n| n.contains("causal when it is given an attention_mask")), "{:?}", spec.notes);
    }
    assert!(
        !read(r#"{"model_type": "clip", "num_hidden_layers": 2}"#).notes.iter().any(|n| n.contains("attention_mask"))
    );
}

#[test]
fn sam3_lite_text_reads_its_repmixer_ends_as_windows() {
    let spec = read(r#"{"model_type": "sam3_lite_text", "text_config": {"num_hidden_layers": 4}}"#);
    // Two centred convolutions of kernel 11: |q - k| <= 10.
    let conv = LayerKind::Sliding { window: 11 };
    assert_eq!((spec.causal, spec.layers), (false, vec![conv, LayerKind::Full, LayerKind::Full, conv]));
    let spec = read(
        r#"{"model_type": "sam3_lite_text_text_model", "num_hidden_layers": 3, "repmixer_kernel_size": 5,
            "use_repmixer_blocks": true}"#,
    );
    let conv = LayerKind::Sliding { window: 5 };
    assert_eq!(spec.layers, vec![conv, LayerKind::Full, conv]);
    let spec =
        read(r#"{"model_type": "sam3_lite_text_text_model", "num_hidden_layers": 2, "use_repmixer_blocks": false}"#);
    assert_eq!(spec.layers, vec![LayerKind::Full; 2]);
    let e = model::parse_config(r#"{"model_type": "sam3_lite_text_text_model", "repmixer_kernel_size": 4}"#, "t")
        .expect_err("even kernel");
    assert!(e.to_string().starts_with("repmixer_kernel_size: not supported: 4 is even"), "{e}");
}

#[test]
fn lxmert_reads_its_language_then_cross_modality_layers() {
    let spec = read(
        r#"{"model_type": "lxmert", "l_layers": 3, "x_layers": 2, "r_layers": 4,
        "num_hidden_layers": {"vision": 4, "cross_encoder": 2, "language": 3}}"#,
    );
    assert_eq!((spec.causal, spec.layers), (false, vec![LayerKind::Full; 5]));
    assert!(
        spec.notes.iter().any(|n| n.contains("3 language layers, then 2 cross-modality layers")),
        "{:?}",
        spec.notes
    );
    assert_eq!(read(r#"{"model_type": "lxmert"}"#).layers.len(), 14);
}

#[test]
fn retrieval_models_over_a_vlm_read_its_language_model() {
    for (top, vlm, text, causal) in
        [("colpali", "paligemma", "gemma", true), ("colmodernvbert", "modernvbert", "modernbert", false)]
    {
        let spec = read(&format!(
            r#"{{"model_type": "{top}", "vlm_config": {{"model_type": "{vlm}",
                "text_config": {{"model_type": "{text}", "num_hidden_layers": 2}}}}}}"#
        ));
        assert_eq!((spec.causal, spec.layers.len(), spec.model_type.as_str()), (causal, 2, text), "{top}");
        assert!(spec.notes[0].contains("vlm_config.text_config"), "{top}: {:?}", spec.notes);
    }
}

#[test]
fn gemma4_style_configs_force_their_last_layer_full_as_their_classes_do() {
    for t in ["gemma4_text", "gemma4_unified_text", "diffusion_gemma_text", "embedding_gemma2_text"] {
        let spec = read(&format!(
            r#"{{"model_type": "{t}", "num_hidden_layers": 2, "sliding_window": 8,
                "layer_types": ["sliding_attention", "sliding_attention"]}}"#
        ));
        assert_eq!(spec.layers[1], LayerKind::Full, "{t}");
        assert!(matches!(spec.layers[0], LayerKind::Sliding { .. }), "{t}: {:?}", spec.layers);
    }
}
