//! Share links: the mask in the URL fragment as `n=<side>&m=<base64url of the packed bits>`
//! (the core's `bits::pack_bits`: row-major, cell `(q, k)` is bit `i % 8` of byte `i / 8` with
//! `i = q·n + k`, as in the JSON `packed` field, but URL-safe and unpadded), and its position
//! labels, when it has any, as `&l=<base64url of the labels as a JSON array of strings>`.
//! Decoding checks everything a tampered link can break and says what ([`ShareError`]).
//!
//! The codec knows nothing of the editor: the largest side a link may carry is the caller's.

use crate::base64::{DecodeError, URL_SAFE_NO_PAD};
use crate::bits::BitMatrix;
use crate::bits::PackedBitsError;
use crate::bits::{pack_bits, unpack_bits};
use crate::format::{FormatError, MAX_LABEL_CHARS, check_labels};

/// Why a share link (or a designer link) cannot be read: what a tampered or truncated link broke.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShareError {
    /// No `n=` field.
    #[error("it has no size (n=...)")]
    NoSize,
    /// The `n=` field is not a number (the text as given).
    #[error("n = {0:?} is not a number")]
    SizeNotANumber(String),
    /// The size is 0 or larger than the caller accepts.
    #[error("n = {n} is out of range 1..={max}")]
    SizeOutOfRange {
        /// The link's size.
        n: usize,
        /// The largest accepted.
        max: usize,
    },
    /// No `m=` field.
    #[error("it has no mask data (m=...)")]
    NoMask,
    /// More mask data than an `n x n` mask needs.
    #[error("the mask data is too long for n = {0}")]
    MaskTooLong(usize),
    /// The mask data is not unpadded base64url.
    #[error("the mask data is not base64url ({0})")]
    MaskNotBase64(DecodeError),
    /// The mask data has the wrong length or bits past the last cell.
    #[error("the mask data {0}")]
    MaskBits(PackedBitsError),
    /// More label data than `n` labels within the length limit can take.
    #[error("the labels are too long for n = {0}")]
    LabelsTooLong(usize),
    /// The label data is not unpadded base64url.
    #[error("the labels are not base64url ({0})")]
    LabelsNotBase64(DecodeError),
    /// The label data is not UTF-8.
    #[error("the labels are not text")]
    LabelsNotText,
    /// The label data is not a JSON list of strings (the JSON error, in words).
    #[error("the labels are not a list of strings ({0})")]
    LabelsNotStrings(String),
    /// The labels are not `n` strings within the length limit.
    #[error("{0}")]
    Labels(FormatError),
    /// More designer (or Models) data than a family's (or a model's) JSON can take.
    #[error("the link's data is too long")]
    DesignTooLong,
    /// The designer (or Models) data is not unpadded base64url.
    #[error("the link's data is not base64url ({0})")]
    DesignNotBase64(DecodeError),
    /// The designer (or Models) data is not UTF-8.
    #[error("the link's data is not text")]
    DesignNotText,
    /// The Models link's data is not a [`ModelLink`] (the JSON error, in words).
    #[error("the model link's data is not a model and context ({0})")]
    ModelNotJson(String),
}

/// What a share link carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shared {
    /// The mask.
    pub mask: BitMatrix,
    /// Its position labels, if the link has them.
    pub labels: Option<Vec<String>>,
}

/// Encodes `mask` and its `labels` (when given) as a fragment (without `#`).
///
/// # Examples
/// ```
/// use hasseflow_core::BitMatrix;
/// let m = BitMatrix::from_fn(4, |q, k| k <= q);
/// let f = hasseflow_core::share::encode(&m, None);
/// assert_eq!(f, "n=4&m=Mfc");
/// assert_eq!(hasseflow_core::share::decode(&f, 512).unwrap().mask, m);
/// let labels = ["a", "b", "<c>", "d e"].map(String::from).to_vec();
/// let f = hasseflow_core::share::encode(&m, Some(&labels));
/// assert_eq!(hasseflow_core::share::decode(&f, 512).unwrap().labels, Some(labels));
/// ```
pub fn encode(mask: &BitMatrix, labels: Option<&[String]>) -> String {
    let n = mask.n();
    let mut out = format!("n={n}&m={}", URL_SAFE_NO_PAD.encode(pack_bits(mask)));
    if let Some(labels) = labels {
        let json = serde_json::to_string(labels).unwrap_or_else(|_| "[]".into());
        out.push_str("&l=");
        out.push_str(&URL_SAFE_NO_PAD.encode(json));
    }
    out
}

/// Decodes a fragment made by [`encode`] (a leading `#` is accepted) of a mask with at most
/// `max_n` positions.
///
/// # Errors
/// A [`ShareError`] saying what is wrong: missing or bad fields, a size out of range, bad base64,
/// a wrong length, bits past the last cell; labels that are not a JSON list of `n` strings within
/// the length limit.
pub fn decode(fragment: &str, max_n: usize) -> Result<Shared, ShareError> {
    let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
    let mut n = None;
    let mut data = None;
    let mut label_data = None;
    for part in fragment.split('&').filter(|p| !p.is_empty()) {
        match part.split_once('=') {
            Some(("n", v)) => n = Some(v.parse::<usize>().map_err(|_| ShareError::SizeNotANumber(v.to_string()))?),
            Some(("m", v)) => data = Some(v),
            Some(("l", v)) => label_data = Some(v),
            _ => {}
        }
    }
    let n = n.ok_or(ShareError::NoSize)?;
    if n == 0 || n > max_n {
        return Err(ShareError::SizeOutOfRange { n, max: max_n });
    }
    let data = data.ok_or(ShareError::NoMask)?;
    let expected = (n * n).div_ceil(8);
    if data.len() > expected.div_ceil(3) * 4 + 4 {
        return Err(ShareError::MaskTooLong(n));
    }
    let bytes = URL_SAFE_NO_PAD.decode(data).map_err(ShareError::MaskNotBase64)?;
    let mask = unpack_bits(&bytes, n).map_err(ShareError::MaskBits)?;
    let labels = label_data.map(|v| decode_labels(v, n)).transpose()?;
    Ok(Shared { mask, labels })
}

fn decode_labels(data: &str, n: usize) -> Result<Vec<String>, ShareError> {
    // At most MAX_LABEL_CHARS characters of up to 4 UTF-8 bytes (6 escaped in JSON) per label.
    let limit = (n * (MAX_LABEL_CHARS * 6 + 3) + 2).div_ceil(3) * 4;
    if data.len() > limit {
        return Err(ShareError::LabelsTooLong(n));
    }
    let bytes = URL_SAFE_NO_PAD.decode(data).map_err(ShareError::LabelsNotBase64)?;
    // Read as text, then as JSON: serde_json's byte-slice reader would be a second JSON parser
    // in the wasm (6 KB), beside the one every other reader uses.
    let text = std::str::from_utf8(&bytes).map_err(|_| ShareError::LabelsNotText)?;
    let labels: Vec<String> = serde_json::from_str(text).map_err(|e| ShareError::LabelsNotStrings(e.to_string()))?;
    check_labels(&labels, n).map_err(ShareError::Labels)?;
    Ok(labels)
}

/// Fragment prefix of a designer link: `design=<base64url of the family's JSON>`.
pub const DESIGN_PREFIX: &str = "design=";

/// A designer link's fragment for a family saved as `spec_json` (the designer's family JSON).
pub fn encode_design(spec_json: &str) -> String {
    format!("{DESIGN_PREFIX}{}", URL_SAFE_NO_PAD.encode(spec_json))
}

/// The family JSON of a designer link's data (the part after [`DESIGN_PREFIX`]).
///
/// # Errors
/// [`ShareError::DesignTooLong`], [`ShareError::DesignNotBase64`], [`ShareError::DesignNotText`].
pub fn decode_design(data: &str) -> Result<String, ShareError> {
    if data.len() > 64 * 1024 {
        return Err(ShareError::DesignTooLong);
    }
    let bytes = URL_SAFE_NO_PAD.decode(data).map_err(ShareError::DesignNotBase64)?;
    String::from_utf8(bytes).map_err(|_| ShareError::DesignNotText)
}

/// Fragment prefix of a Models link: `model=<base64url of a [`ModelLink`] as JSON>`.
pub const MODEL_PREFIX: &str = "model=";

/// What a Models link carries: the model (a gallery name, or a `config.json`'s text and file
/// name) and the context it runs at (the Models view's fields), and the layer to show.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelLink {
    /// A gallery model's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gallery: Option<String>,
    /// Or a `config.json`'s text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// The config's file name (messages and the report's source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Context length (an encoder-decoder's decoder length).
    pub n: u64,
    /// Packed document lengths (empty: one document).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub documents: Vec<u64>,
    /// An encoder-decoder's encoder length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoder: Option<u64>,
    /// Image spans `[start, length]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<[u64; 2]>,
    /// The layer the view shows (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer: Option<usize>,
}

/// A Models link's fragment (without `#`).
///
/// # Examples
/// ```
/// use hasseflow_core::share::{ModelLink, decode_model, encode_model, MODEL_PREFIX};
/// let link = ModelLink { gallery: Some("gemma-3-27b-it".into()), n: 131072, ..ModelLink::default() };
/// let f = encode_model(&link);
/// assert_eq!(decode_model(&f[MODEL_PREFIX.len()..]), Ok(link));
/// ```
pub fn encode_model(link: &ModelLink) -> String {
    let json = serde_json::to_string(link).unwrap_or_default();
    format!("{MODEL_PREFIX}{}", URL_SAFE_NO_PAD.encode(json))
}

/// The [`ModelLink`] of a Models link's data (the part after [`MODEL_PREFIX`]).
///
/// # Errors
/// What [`decode_design`] refuses, or [`ShareError::ModelNotJson`].
pub fn decode_model(data: &str) -> Result<ModelLink, ShareError> {
    let text = decode_design(data)?;
    serde_json::from_str(&text).map_err(|e| ShareError::ModelNotJson(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: usize = 512;

    /// The error's message (what the store shows).
    fn err<T: std::fmt::Debug>(r: Result<T, ShareError>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn round_trips_and_refuses_tampering() {
        for n in [1, 3, 8, 13, 64] {
            let m = BitMatrix::from_fn(n, |q, k| (q * 5 + k * 3) % 7 < 3);
            assert_eq!(decode(&format!("#{}", encode(&m, None)), MAX).unwrap(), Shared { mask: m, labels: None });
        }
        assert!(err(decode("", MAX)).contains("no size"));
        assert!(err(decode("n=4", MAX)).contains("no mask data"));
        assert!(err(decode("n=x&m=AA", MAX)).contains("not a number"));
        assert!(err(decode("n=0&m=", MAX)).contains("out of range"));
        assert!(err(decode("n=9999&m=AA", MAX)).contains("out of range"));
        assert!(err(decode("n=4&m=MQ", MAX)).contains("bytes, expected 2"));
        assert!(err(decode("n=4&m=M!c", MAX)).contains("base64url"));
        assert!(decode("n=3&m=_wE", MAX).is_ok());
        assert!(err(decode("n=3&m=_wM", MAX)).contains("past the last cell"));
        // Typed: the caller's limit, and what broke.
        assert_eq!(decode("n=9", 8), Err(ShareError::SizeOutOfRange { n: 9, max: 8 }));
        assert_eq!(decode("m=AA", MAX), Err(ShareError::NoSize));
        assert!(matches!(decode("n=4&m=MQ", MAX), Err(ShareError::MaskBits(_))));
    }

    #[test]
    fn labels_round_trip_and_tampered_labels_are_refused() {
        let m = BitMatrix::from_fn(3, |q, k| k <= q);
        let odd = vec!["<script>".to_string(), "x&l=y#z".to_string(), "ünï ☃ \"q\"".to_string()];
        let f = encode(&m, Some(&odd));
        assert_eq!(decode(&f, MAX).unwrap(), Shared { mask: m.clone(), labels: Some(odd) });
        let base = encode(&m, None);
        let with = |json: &str| format!("{base}&l={}", URL_SAFE_NO_PAD.encode(json));
        assert!(err(decode(&with("[\"a\",\"b\"]"), MAX)).contains("expected 3 labels"));
        assert!(err(decode(&with("{\"a\":1}"), MAX)).contains("not a list of strings"));
        assert!(err(decode(&with("[1,2,3]"), MAX)).contains("not a list of strings"));
        let long = format!("[\"{}\",\"b\",\"c\"]", "x".repeat(MAX_LABEL_CHARS + 1));
        assert!(err(decode(&with(&long), MAX)).contains("limit"));
        assert!(err(decode(&format!("{base}&l=%%%"), MAX)).contains("base64url"));
        let not_utf8 = format!("{base}&l={}", URL_SAFE_NO_PAD.encode([b'[', 0xff, b']']));
        assert_eq!(decode(&not_utf8, MAX), Err(ShareError::LabelsNotText));
        assert!(err(decode(&format!("{base}&l={}", "A".repeat(1 << 20)), MAX)).contains("too long"));
    }

    #[test]
    fn design_links_round_trip() {
        let json = r#"{"family":"butterfly","n":4}"#;
        let f = encode_design(json);
        assert!(f.starts_with(DESIGN_PREFIX));
        assert_eq!(decode_design(&f[DESIGN_PREFIX.len()..]).as_deref(), Ok(json));
        assert!(err(decode_design("%%")).contains("base64url"));
        assert!(err(decode_design(&URL_SAFE_NO_PAD.encode([0xff, 0xfe]))).contains("not text"));
        assert!(err(decode_design(&"A".repeat(70_000))).contains("too long"));
    }

    #[test]
    fn model_links_round_trip_and_refuse_what_is_not_a_model() {
        let link = ModelLink {
            config: Some("{\"model_type\": \"llama\"}".into()),
            name: Some("config.json".into()),
            n: 1 << 20,
            documents: vec![1 << 19, 1 << 19],
            images: vec![[4, 16]],
            layer: Some(3),
            ..ModelLink::default()
        };
        let f = encode_model(&link);
        assert_eq!(decode_model(&f[MODEL_PREFIX.len()..]), Ok(link));
        let data = |json: &str| URL_SAFE_NO_PAD.encode(json);
        assert!(err(decode_model(&data("{\"gallery\": \"x\"}"))).contains("missing field `n`"));
        assert!(err(decode_model(&data("{\"n\": 4, \"cells\": 1}"))).contains("unknown field"));
        assert!(err(decode_model("%%")).contains("base64url"));
    }
}
