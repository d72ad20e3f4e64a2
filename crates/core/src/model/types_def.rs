//! What the reader knows about each `model_type` that a `config.json` does not say: the rows of
//! the generated [`super::types::TYPES`] text (tests/python/gen_model_types.py reads them from
//! the pinned Transformers; tests/python/test_models_live.py checks them against the models).

/// How a type's text model attends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// A decoder: every layer causal.
    Decoder,
    /// An encoder: every layer bidirectional.
    Encoder,
    /// A BERT-style model: an encoder unless the file sets `is_decoder: true`.
    IsDecoder,
    /// XLM / FlauBERT: an encoder unless the file sets `causal: true`.
    XlmCausal,
    /// An encoder-decoder (T5, BART, Whisper): the encoder, then the decoder reading it.
    EncoderDecoder,
    /// A multimodal wrapper whose language model is its `text_config` (of type `text`).
    Composite,
    /// A type whose direction the pinned Transformers does not show (no modeling file).
    Unknown,
}

/// What a type's text model does with packed documents given as 2-D position ids
/// (tests/python/gen_model_types.py derives it; test_models_live.py measures it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PackingFact {
    /// Its forward passes them to `create_causal_mask` (or the sliding or chunked builder),
    /// which finds the documents (`find_packed_sequence_indices`).
    Detected,
    /// Its masks never see them (an encoder's `create_bidirectional_mask`, builders called
    /// without `position_ids`, a forward that makes a 2-D mask or a cache itself).
    Ignored,
    /// An M-RoPE model that reads documents only from the first row of 4-row position ids.
    FourRowPositions,
    /// Its masks detect them, but short convolutions beside the attention or recurrence read a
    /// few positions across each boundary: not modelled with documents.
    CrossingConvolutions,
}

/// One row of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct TypeFacts {
    /// The `model_type`.
    pub model_type: &'static str,
    /// How its text model attends.
    pub role: Role,
    /// A composite's default text `model_type` (else empty).
    pub text: &'static str,
    /// The layer-count field (the decoder's for an encoder-decoder), e.g. `n_layer` for GPT-2.
    pub layers: &'static str,
    /// Its class default.
    pub layers_default: Option<u64>,
    /// An encoder-decoder's encoder layer-count field (else empty).
    pub encoder_layers: &'static str,
    /// Its class default.
    pub encoder_default: Option<u64>,
    /// The position-limit field, e.g. `n_positions`.
    pub positions: &'static str,
    /// Its class default.
    pub positions_default: Option<u64>,
    /// Whether the modeling file applies `sliding_window`, when set, to every layer (Mistral's
    /// `create_causal_mask if self.config.sliding_window is None else ...`).
    pub window_all: bool,
    /// The one layer type of the class's default `layer_types` when they are all one type and
    /// not `full_attention` (DeepSeek-V3.2's `indexed_attention`), else empty.
    pub uniform: &'static str,
    /// What the text model does with packed documents given as 2-D position ids (a composite's
    /// text tower's row says; its own is [`PackingFact::Ignored`]).
    pub packing: PackingFact,
    /// Whether the modeling file builds each layer's mask from that layer's `per_layer_config`
    /// (NeoMME: a `sliding_window` per layer).
    pub per_layer_masks: bool,
}

/// The row of `model_type`, if Transformers has it.
pub(super) fn facts(model_type: &str) -> Option<TypeFacts> {
    super::types::TYPES.lines().find_map(|line| {
        let mut cells = line.split('\t');
        if cells.next()? != model_type {
            return None;
        }
        let mut next = || cells.next().unwrap_or("");
        let role = match next() {
            "D" => Role::Decoder,
            "E" => Role::Encoder,
            "B" => Role::IsDecoder,
            "X" => Role::XlmCausal,
            "S" => Role::EncoderDecoder,
            "C" => Role::Composite,
            _ => Role::Unknown,
        };
        let text = next();
        let layers = next();
        let layers_default = next().parse().ok();
        let encoder_layers = next();
        let encoder_default = next().parse().ok();
        let positions = next();
        let positions_default = next().parse().ok();
        let window_all = next() == "1";
        let uniform = next();
        let packing = match next() {
            "1" => PackingFact::Detected,
            "M" => PackingFact::FourRowPositions,
            "C" => PackingFact::CrossingConvolutions,
            _ => PackingFact::Ignored,
        };
        let per_layer_masks = next() == "1";
        Some(TypeFacts {
            model_type: line.split('\t').next().unwrap_or(""),
            role,
            text,
            layers,
            layers_default,
            encoder_layers,
            encoder_default,
            positions,
            positions_default,
            window_all,
            uniform,
            packing,
            per_layer_masks,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_has_its_thirteen_cells_and_a_known_role() {
        let mut last = "";
        for line in super::super::types::TYPES.lines() {
            let cells: Vec<&str> = line.split('\t').collect();
            assert_eq!(cells.len(), 13, "{line}");
            assert!(cells[0] > last, "sorted and unique: {line}");
            last = cells[0];
            let f = facts(cells[0]).expect("its own row");
            assert_ne!(f.role, Role::Unknown, "{line}");
            assert_eq!(f.role == Role::Composite, !f.text.is_empty(), "{line}");
            assert!(["0", "1", "M", "C"].contains(&cells[11]) || (f.role == Role::Composite && cells[11].is_empty()));
        }
        let t5 = facts("t5").expect("t5");
        assert_eq!((t5.role, t5.encoder_layers, t5.layers), (Role::EncoderDecoder, "num_layers", "num_decoder_layers"));
        assert_eq!(facts("gpt2").map(|f| (f.layers, f.positions)), Some(("n_layer", "n_positions")));
        assert_eq!(facts("llava").map(|f| f.text), Some("llama"));
        // Llama passes position_ids to create_causal_mask; BERT builds create_bidirectional_mask
        // (and, as a decoder, create_causal_mask without position_ids); gpt-oss leaves them out.
        let packs = |t: &str| facts(t).map(|f| f.packing);
        let (yes, no) = (Some(PackingFact::Detected), Some(PackingFact::Ignored));
        assert_eq!((packs("llama"), packs("bert"), packs("gpt_oss"), packs("idefics")), (yes, no, no, no));
        assert_eq!(packs("qwen2_vl_text"), Some(PackingFact::FourRowPositions));
        assert_eq!(packs("recurrent_gemma"), Some(PackingFact::CrossingConvolutions));
        assert_eq!(facts("neomme").map(|f| f.per_layer_masks), Some(true));
        assert_eq!(facts("llama").map(|f| f.per_layer_masks), Some(false));
        assert_eq!(facts("nope"), None);
    }
}
