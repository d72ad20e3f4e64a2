//! The config reader across a module boundary: a read (a gallery entry, or a `config.json`'s
//! text with its name) and its answer (the model, or the refusal in one line), each as one JSON
//! string. The web app's first download leaves the reader and the model type table out (the core
//! without its `model-reader` feature); `crates/lazy`'s model module, loaded when the Models
//! view first needs a model, answers with [`answer`], and the app reads the answer back with
//! [`read_answer`] into exactly what [`load_gallery`](super::load_gallery) or
//! [`parse_config`](super::parse_config) return where the reader is linked in. The CLI and the
//! Python package never use this: they link the reader.

use serde::{Deserialize, Serialize};

use super::{ModelError, config_text, gallery_entry};
use crate::pattern::{EncoderSpec, LayerKind, ModelSpec, Packing};
use crate::tuple_wire::{each, tuple_wire};

/// What to read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Request {
    /// A gallery entry, by name.
    Gallery(String),
    /// A `config.json`.
    Config {
        /// Its name (a file name, or "pasted config"): the model's name.
        name: String,
        /// Its text.
        text: String,
    },
}

impl Request {
    /// The read of gallery entry `name`.
    ///
    /// # Errors
    /// [`ModelError::UnknownGalleryName`], as the reader would refuse it.
    pub fn gallery(name: &str) -> Result<Self, ModelError> {
        gallery_entry(name).map(|e| Request::Gallery(e.name.to_string()))
    }

    /// The read of a config given as bytes.
    ///
    /// # Errors
    /// As [`config_text`]: too large, or not UTF-8 (the reader's own refusals of such bytes).
    pub fn config(name: &str, bytes: &[u8]) -> Result<Self, ModelError> {
        config_text(bytes).map(|text| Request::Config { name: name.to_string(), text: text.to_string() })
    }

    /// The request as one JSON string.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads it here when this build links the reader ([`READER_LINKED`](super::READER_LINKED));
    /// `None` without it: ask the lazily loaded module ([`answer`]).
    pub fn read_here(&self) -> Option<Result<ModelSpec, ModelError>> {
        #[cfg(feature = "model-reader")]
        return Some(self.read());
        #[cfg(not(feature = "model-reader"))]
        None
    }

    /// Reads it here, with the reader linked in: what [`answer`] gives, without the JSON.
    ///
    /// # Errors
    /// The reader's refusal.
    #[cfg(feature = "model-reader")]
    pub fn read(&self) -> Result<ModelSpec, ModelError> {
        match self {
            Request::Gallery(name) => super::load_gallery(name),
            Request::Config { name, text } => super::parse_config(text, name),
        }
    }
}

/// The answer on the wire: the model, or the reader's refusal in its one line. The model goes as
/// arrays (`crate::tuple_wire`), read with no field names to match.
#[derive(Serialize, Deserialize)]
enum Answer {
    Model(SpecWire),
    Refused(String),
}

tuple_wire!(ModelSpec as SpecWire {
    name: String,
    model_type: String,
    causal: bool,
    layers: Vec<KindWire> => each, each,
    max_position_embeddings: Option<u64>,
    encoder: Option<EncoderWire> => |e: Option<EncoderSpec>| e.map(EncoderWire::from), |e: Option<EncoderWire>| e.map(EncoderSpec::from),
    notes: Vec<String>,
    packing: Packing,
});

tuple_wire!(EncoderSpec as EncoderWire { layers: Vec<KindWire> => each, each, causal: bool, context: u64 });

/// [`LayerKind`] on the wire: externally tagged, each variant's fields as an array (the named
/// form is internally tagged, which serde reads through a buffer).
#[derive(Serialize, Deserialize)]
enum KindWire {
    Full,
    Sliding(u64),
    Chunked(u64),
    Linear,
    Conv(u64),
    Indexed,
    Pointwise,
}

impl From<LayerKind> for KindWire {
    fn from(k: LayerKind) -> Self {
        match k {
            LayerKind::Full => KindWire::Full,
            LayerKind::Sliding { window } => KindWire::Sliding(window),
            LayerKind::Chunked { size } => KindWire::Chunked(size),
            LayerKind::Linear => KindWire::Linear,
            LayerKind::Conv { width } => KindWire::Conv(width),
            LayerKind::Indexed => KindWire::Indexed,
            LayerKind::Pointwise => KindWire::Pointwise,
        }
    }
}

impl From<KindWire> for LayerKind {
    fn from(k: KindWire) -> Self {
        match k {
            KindWire::Full => LayerKind::Full,
            KindWire::Sliding(window) => LayerKind::Sliding { window },
            KindWire::Chunked(size) => LayerKind::Chunked { size },
            KindWire::Linear => LayerKind::Linear,
            KindWire::Conv(width) => LayerKind::Conv { width },
            KindWire::Indexed => LayerKind::Indexed,
            KindWire::Pointwise => LayerKind::Pointwise,
        }
    }
}

/// Answers a request (JSON from [`Request::to_json`]) as the linked reader would
/// ([`Request::read`]), as one JSON string for [`read_answer`]. A request that is not one is
/// refused in words.
#[cfg(feature = "model-reader")]
pub fn answer(request: &str) -> String {
    let answer = match serde_json::from_str::<Request>(request) {
        Err(e) => Answer::Refused(format!("not a model request: {e}")),
        Ok(r) => match r.read() {
            Ok(spec) => Answer::Model(spec.into()),
            Err(e) => Answer::Refused(e.to_string()),
        },
    };
    serde_json::to_string(&answer).unwrap_or_default()
}

/// Reads an answer of [`answer`]: the model, or the refusal's line. An answer that is not one
/// (a truncated or tampered string) is refused with what is wrong.
///
/// # Errors
/// The reader's refusal, or a line naming a malformed answer.
pub fn read_answer(answer: &str) -> Result<ModelSpec, String> {
    match serde_json::from_str::<Answer>(answer) {
        Err(e) => Err(format!("the model reader's answer: {e}")),
        Ok(Answer::Model(spec)) => Ok(spec.into()),
        Ok(Answer::Refused(why)) => Err(why),
    }
}

#[cfg(all(test, feature = "model-reader"))]
mod tests {
    use super::*;
    use crate::model::{GALLERY, MAX_CONFIG_BYTES};

    /// Across the wire every gallery entry, and configs the reader reads or refuses, come back as
    /// the linked reader gives them.
    #[test]
    fn the_wire_gives_what_the_reader_gives() {
        for e in GALLERY {
            let r = Request::gallery(e.name).expect("a gallery name");
            let direct = r.read().map_err(|e| e.to_string());
            assert_eq!(read_answer(&answer(&r.to_json())), direct, "{}", e.name);
            assert!(direct.is_ok(), "{}", e.name);
        }
        let texts = [
            r#"{"model_type": "qwen2_vl", "text_config": {"model_type": "qwen2_vl_text", "num_hidden_layers": 2}}"#,
            r#"{"model_type": "t5", "num_layers": 6, "num_decoder_layers": 4}"#,
            r#"{"model_type": "mistral", "num_hidden_layers": 2, "sliding_window": 0}"#,
            r#"{"layer_types": ["full_attention", "warp_attention"]}"#,
            "{\"model_type\": ",
            "[]",
        ];
        for text in texts {
            let r = Request::config("my.json", text.as_bytes()).expect("within the limits");
            let direct = r.read().map_err(|e| e.to_string());
            assert_eq!(read_answer(&answer(&r.to_json())), direct, "{text}");
        }
        // At least one of each: read, and refused.
        let read = |t: &str| Request::config("x", t.as_bytes()).map(|r| r.read().is_ok());
        assert_eq!((read(texts[0]), read(texts[3])), (Ok(true), Ok(false)));
    }

    /// What the first download refuses before asking: an unknown gallery name, a config too
    /// large or not UTF-8, each in the reader's words; and a damaged answer or request is a
    /// line, never a panic.
    #[test]
    fn refusals_and_damaged_answers_are_one_line() {
        assert_eq!(Request::gallery("nope"), Err(ModelError::UnknownGalleryName("nope".into())));
        let big = vec![b' '; MAX_CONFIG_BYTES + 1];
        assert_eq!(
            Request::config("big.json", &big),
            Err(ModelError::TooLarge { bytes: big.len(), max: MAX_CONFIG_BYTES })
        );
        let bad = Request::config("bad.json", b"{\"a\": \xff}").expect_err("not UTF-8");
        assert_eq!(crate::model::parse_config_bytes(b"{\"a\": \xff}", "bad.json"), Err(bad.clone()));
        assert!(bad.to_string().starts_with("config: malformed JSON: not UTF-8"), "{bad}");
        let good = answer(&Request::gallery("gpt2").expect("gpt2").to_json());
        for cut in [0, 1, good.len() / 2, good.len() - 1] {
            let e = read_answer(&good[..cut]).expect_err("truncated");
            assert!(e.starts_with("the model reader's answer: ") && !e.contains('\n'), "{e}");
        }
        for request in ["", "{", "\"Gallery\"", "{\"Gallery\": 3}", "{\"Config\": {\"name\": \"x\"}}"] {
            let e = read_answer(&answer(request)).expect_err("not a request");
            assert!(e.starts_with("not a model request: ") && !e.contains('\n'), "{e}");
        }
    }
}
