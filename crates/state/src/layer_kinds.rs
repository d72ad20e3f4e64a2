//! What the Models view says about a model's layers: the legend of the layer kinds present
//! (each with what a query reads in it, in a few words), one strip cell per layer in run order
//! (an encoder-decoder's encoder first), and the one-line descriptions of the form. Computed
//! from the [`ModelSpec`] here, so the components only draw. Plain Rust, tested natively.

use hasseflow_core::model;
pub use hasseflow_core::model::pattern_line;
use hasseflow_core::pattern::{LayerKind, ModelSpec};

/// Which part of an encoder-decoder a layer belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerRole {
    /// A decoder-only or encoder-only model's layer.
    Plain,
    /// An encoder-decoder's encoder layer (reads only encoder positions).
    Encoder,
    /// An encoder-decoder's decoder layer (its own kind over decoder keys, plus cross-attention
    /// to every encoder position).
    Decoder,
}

impl LayerRole {
    /// `plain`, `encoder` or `decoder` (the legend's `data-role`).
    pub fn as_str(self) -> &'static str {
        match self {
            LayerRole::Plain => "plain",
            LayerRole::Encoder => "encoder",
            LayerRole::Decoder => "decoder",
        }
    }
}

/// One entry of the legend: a kind (with its parameter) in one role.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindEntry {
    /// The CSS class that colours the kind (`kind-full`, `kind-sliding`, …): one per family.
    pub class: &'static str,
    /// The kind's family, as the e2e tests and the table read it (`full`, `sliding`, …).
    pub family: &'static str,
    /// The kind's role.
    pub role: LayerRole,
    /// Its name: `sliding(4096)`, `encoder · full`, `decoder · full + cross-attention`.
    pub name: String,
    /// What a query reads in such a layer, in a few words.
    pub meaning: String,
    /// How many layers of the model are of this entry.
    pub count: usize,
}

/// The legend of a model's layers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerLegend {
    /// The kinds present, in order of first appearance.
    pub entries: Vec<KindEntry>,
    /// Per layer, in run order (encoder first): the index of its entry.
    pub strip: Vec<usize>,
    /// Encoder layers (0 for a model without an encoder): the first `encoder_layers` of `strip`.
    pub encoder_layers: usize,
    /// The layer order in words (for the strip's accessible name).
    pub summary: String,
}

/// The family name and CSS class of a kind.
pub fn kind_family(kind: LayerKind) -> (&'static str, &'static str) {
    match kind {
        LayerKind::Full => ("full", "kind-full"),
        LayerKind::Sliding { .. } => ("sliding", "kind-sliding"),
        LayerKind::Chunked { .. } => ("chunked", "kind-chunked"),
        LayerKind::Linear => ("linear", "kind-linear"),
        LayerKind::Conv { .. } => ("conv", "kind-conv"),
        LayerKind::Indexed => ("indexed", "kind-indexed"),
        LayerKind::Pointwise => ("pointwise", "kind-pointwise"),
    }
}

/// A kind's short name: `full`, `sliding(4096)`, `linear / SSM`, `conv(3)`, …
fn short_name(kind: LayerKind) -> String {
    match kind {
        LayerKind::Full => "full".into(),
        LayerKind::Sliding { window } => format!("sliding({window})"),
        LayerKind::Chunked { size } => format!("chunked({size})"),
        LayerKind::Linear => "linear / SSM".into(),
        LayerKind::Conv { width } => format!("conv({width})"),
        LayerKind::Indexed => "indexed".into(),
        LayerKind::Pointwise => "pointwise".into(),
    }
}

/// What a query reads in a layer of `kind`, in a few words (`keys`: "keys" or "decoder keys").
fn reads(kind: LayerKind, causal: bool, keys: &str) -> String {
    let earlier = if causal || kind.always_causal() { "earlier " } else { "" };
    match kind {
        LayerKind::Full => format!("every {earlier}{}", singular(keys)),
        LayerKind::Sliding { window } if causal => format!("the last {window} {keys} (a window)"),
        LayerKind::Sliding { window } => {
            format!("{keys} within {} on either side (a window of {window})", window.saturating_sub(1))
        }
        LayerKind::Chunked { size } => format!("the {earlier}{keys} of its own chunk of {size}"),
        LayerKind::Linear => format!(
            "recurrent (SSM, linear attention or a hybrid): every earlier {}; causal, ignores document boundaries",
            singular(keys)
        ),
        LayerKind::Conv { width } => {
            format!("a short convolution: the last {width} {keys} (kernel width); causal, ignores document boundaries")
        }
        LayerKind::Indexed => {
            format!("data-dependent top-k; shown is its static bound, every {earlier}{}", singular(keys))
        }
        LayerKind::Pointwise => "mixes no positions: each reads only itself".into(),
    }
}

fn singular(keys: &str) -> &str {
    keys.strip_suffix('s').unwrap_or(keys)
}

impl LayerLegend {
    /// The legend of `spec`: every kind present, with its count and meaning, and the strip.
    pub fn of(spec: &ModelSpec) -> LayerLegend {
        let mut entries: Vec<KindEntry> = Vec::new();
        let mut keys: Vec<(LayerRole, LayerKind)> = Vec::new();
        let mut strip = Vec::with_capacity(spec.layer_count());
        let layers =
            spec.encoder.iter().flat_map(|e| e.layers.iter().map(move |&k| (LayerRole::Encoder, k, e.causal))).chain(
                spec.layers.iter().map(|&k| {
                    (if spec.encoder.is_some() { LayerRole::Decoder } else { LayerRole::Plain }, k, spec.causal)
                }),
            );
        for (role, kind, causal) in layers {
            let i = match keys.iter().position(|&x| x == (role, kind)) {
                Some(i) => i,
                None => {
                    keys.push((role, kind));
                    let (family, class) = kind_family(kind);
                    let (name, meaning) = match role {
                        LayerRole::Plain => (short_name(kind), reads(kind, causal, "keys")),
                        LayerRole::Encoder => (
                            format!("encoder · {}", short_name(kind)),
                            format!("over the encoder's positions only: {}", reads(kind, causal, "keys")),
                        ),
                        LayerRole::Decoder => (
                            format!("decoder · {} + cross-attention", short_name(kind)),
                            format!(
                                "{}, and every encoder position (cross-attention)",
                                reads(kind, causal, "decoder keys")
                            ),
                        ),
                    };
                    entries.push(KindEntry { class, family, role, name, meaning, count: 0 });
                    entries.len() - 1
                }
            };
            entries[i].count += 1;
            strip.push(i);
        }
        LayerLegend {
            entries,
            strip,
            encoder_layers: spec.encoder.as_ref().map_or(0, |e| e.layers.len()),
            summary: format!("Layer kinds, first to last: {}", pattern_line(spec)),
        }
    }
}

/// The form's description of a model: name, direction, layers and pattern.
pub fn describe(spec: &ModelSpec) -> String {
    match &spec.encoder {
        None => format!(
            "{} · {} · {} layers: {}",
            spec.name,
            if spec.causal { "decoder (causal)" } else { "encoder (bidirectional)" },
            spec.layers.len(),
            pattern_line(spec)
        ),
        Some(e) => format!(
            "{} · encoder-decoder · {} encoder + {} decoder layers: {}",
            spec.name,
            e.layers.len(),
            spec.layers.len(),
            pattern_line(spec)
        ),
    }
}

/// `text` cut to at most about `max` characters at a `, ` between layers, with `, …` after the
/// cut; unchanged when it is short enough (a hybrid's layer list can run to hundreds of
/// characters: the strip shows every layer).
pub fn clipped(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let end = text.char_indices().nth(max).map_or(text.len(), |(i, _)| i);
    let cut = text[..end].rfind(", ").unwrap_or(end);
    format!("{}, …", &text[..cut])
}

/// The gallery as the form lists it: each entry's name and its option text (`name — pattern`,
/// clipped to about 90 characters).
pub fn gallery_options() -> Vec<(&'static str, String)> {
    model::gallery().iter().map(|e| (e.name, clipped(&format!("{} — {}", e.name, e.pattern), 90))).collect()
}

#[cfg(test)]
mod tests {
    use hasseflow_core::model::{load_gallery, parse_config};
    use hasseflow_core::pattern::EncoderSpec;

    use super::*;

    fn spec(layers: Vec<LayerKind>, causal: bool, encoder: Option<Vec<LayerKind>>) -> ModelSpec {
        ModelSpec {
            name: "m".into(),
            model_type: "x".into(),
            causal,
            layers,
            max_position_embeddings: None,
            encoder: encoder.map(|layers| EncoderSpec { layers, causal: false, context: 0 }),
            notes: Vec::new(),
            packing: Default::default(),
        }
    }

    #[test]
    fn every_kind_present_has_one_entry_with_its_count_in_order_of_appearance() {
        let g = load_gallery("gemma-3-27b-it").unwrap();
        let l = LayerLegend::of(&g);
        let names: Vec<(&str, usize)> = l.entries.iter().map(|e| (e.name.as_str(), e.count)).collect();
        assert_eq!(names, [("sliding(1024)", 52), ("full", 10)]);
        assert_eq!(l.strip.len(), 62);
        assert_eq!((l.strip[4], l.strip[5]), (0, 1));
        assert_eq!(l.entries[0].meaning, "the last 1024 keys (a window)");
        assert_eq!(l.entries[1].meaning, "every earlier key");
        assert!(
            l.summary.starts_with("Layer kinds, first to last: (5 x sliding_attention(1024), full_attention) x 10")
        );
        let mb = LayerLegend::of(&load_gallery("modernbert-base").unwrap());
        assert_eq!(mb.entries[0].meaning, "every key");
        assert_eq!(mb.entries[1].meaning, "keys within 64 on either side (a window of 65)");
    }

    #[test]
    fn the_new_kinds_say_what_they_read() {
        let all = [
            LayerKind::Linear,
            LayerKind::Conv { width: 3 },
            LayerKind::Indexed,
            LayerKind::Pointwise,
            LayerKind::Chunked { size: 8192 },
            LayerKind::Linear,
        ];
        let l = LayerLegend::of(&spec(all.to_vec(), true, None));
        let got: Vec<(&str, &str)> = l.entries.iter().map(|e| (e.family, e.name.as_str())).collect();
        assert_eq!(
            got,
            [
                ("linear", "linear / SSM"),
                ("conv", "conv(3)"),
                ("indexed", "indexed"),
                ("pointwise", "pointwise"),
                ("chunked", "chunked(8192)")
            ]
        );
        assert_eq!(l.entries[0].count, 2);
        assert!(l.entries[0].meaning.contains("causal, ignores document boundaries"));
        assert!(l.entries[1].meaning.contains("the last 3 keys (kernel width)"));
        assert!(l.entries[2].meaning.contains("static bound"));
        assert_eq!(l.entries[3].meaning, "mixes no positions: each reads only itself");
        assert_eq!(l.entries[4].meaning, "the earlier keys of its own chunk of 8192");
        // Recurrent kinds are causal even in a bidirectional model.
        let b = LayerLegend::of(&spec(vec![LayerKind::Linear, LayerKind::Full], false, None));
        assert!(b.entries[0].meaning.contains("every earlier key"));
        assert_eq!(b.entries[1].meaning, "every key");
    }

    #[test]
    fn an_encoder_decoder_lists_encoder_then_decoder_with_cross_attention() {
        let t5 = parse_config(r#"{"model_type": "t5", "num_layers": 6, "num_decoder_layers": 4}"#, "t5-tiny").unwrap();
        let l = LayerLegend::of(&t5);
        assert_eq!(l.encoder_layers, 6);
        assert_eq!(l.strip, [0, 0, 0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(l.entries[0].name, "encoder · full");
        assert_eq!(l.entries[0].meaning, "over the encoder's positions only: every key");
        assert_eq!(l.entries[1].name, "decoder · full + cross-attention");
        assert_eq!(l.entries[1].meaning, "every earlier decoder key, and every encoder position (cross-attention)");
        assert_eq!(
            describe(&t5),
            "t5-tiny · encoder-decoder · 6 encoder + 4 decoder layers: encoder 6 x full_attention; decoder 4 x \
             full_attention + cross-attention"
        );
    }

    #[test]
    fn long_layer_lists_are_clipped_between_layers() {
        assert_eq!(clipped("a, b, c", 7), "a, b, c");
        assert_eq!(clipped("full_attention, pointwise, linear_attention", 30), "full_attention, pointwise, …");
        assert_eq!(clipped("αβγδε", 3), "αβγ, …");
    }

    #[test]
    fn the_gallery_options_name_every_entry() {
        let o = gallery_options();
        assert_eq!(o.len(), model::gallery().len());
        assert!(
            o.iter().any(|(n, t)| *n == "mistral-7b-v0.1" && t == "mistral-7b-v0.1 — 32 x sliding_attention(4096)")
        );
    }
}
