//! Share links: the mask in the URL fragment as `n=<side>&m=<base64url of the packed bits>`
//! (the core's `bits::pack_bits`: row-major, cell `(q, k)` is bit `i % 8` of byte `i / 8` with
//! `i = q·n + k`, as in the JSON `packed` field, but URL-safe and unpadded), and its position
//! labels, when it has any, as `&l=<base64url of the labels as a JSON array of strings>`.
//! Decoding checks everything a tampered link can break and says what.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hasseflow_core::BitMatrix;
use hasseflow_core::bits::{pack_bits, unpack_bits};
use hasseflow_core::format::{MAX_LABEL_CHARS, check_labels};

use crate::state::MAX_EDIT_N;

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
/// let f = hasseflow_app::share::encode(&m, None);
/// assert_eq!(f, "n=4&m=Mfc");
/// assert_eq!(hasseflow_app::share::decode(&f).unwrap().mask, m);
/// let labels = ["a", "b", "<c>", "d e"].map(String::from).to_vec();
/// let f = hasseflow_app::share::encode(&m, Some(&labels));
/// assert_eq!(hasseflow_app::share::decode(&f).unwrap().labels, Some(labels));
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

/// Decodes a fragment made by [`encode`] (a leading `#` is accepted).
///
/// # Errors
/// A sentence saying what is wrong: missing or bad fields, a size out of range, bad base64, a
/// wrong length, bits past the last cell; labels that are not a JSON list of `n` strings within
/// the length limit.
pub fn decode(fragment: &str) -> Result<Shared, String> {
    let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
    let mut n = None;
    let mut data = None;
    let mut label_data = None;
    for part in fragment.split('&').filter(|p| !p.is_empty()) {
        match part.split_once('=') {
            Some(("n", v)) => n = Some(v.parse::<usize>().map_err(|_| format!("n = {v:?} is not a number"))?),
            Some(("m", v)) => data = Some(v),
            Some(("l", v)) => label_data = Some(v),
            _ => {}
        }
    }
    let n = n.ok_or("it has no size (n=...)")?;
    if n == 0 || n > MAX_EDIT_N {
        return Err(format!("n = {n} is out of range 1..={MAX_EDIT_N}"));
    }
    let data = data.ok_or("it has no mask data (m=...)")?;
    let expected = (n * n).div_ceil(8);
    if data.len() > expected.div_ceil(3) * 4 + 4 {
        return Err(format!("the mask data is too long for n = {n}"));
    }
    let bytes = URL_SAFE_NO_PAD.decode(data).map_err(|e| format!("the mask data is not base64url ({e})"))?;
    let mask = unpack_bits(&bytes, n).map_err(|e| format!("the mask data {e}"))?;
    let labels = label_data.map(|v| decode_labels(v, n)).transpose()?;
    Ok(Shared { mask, labels })
}

fn decode_labels(data: &str, n: usize) -> Result<Vec<String>, String> {
    // At most MAX_LABEL_CHARS characters of up to 4 UTF-8 bytes (6 escaped in JSON) per label.
    let limit = (n * (MAX_LABEL_CHARS * 6 + 3) + 2).div_ceil(3) * 4;
    if data.len() > limit {
        return Err(format!("the labels are too long for n = {n}"));
    }
    let bytes = URL_SAFE_NO_PAD.decode(data).map_err(|e| format!("the labels are not base64url ({e})"))?;
    let labels: Vec<String> =
        serde_json::from_slice(&bytes).map_err(|e| format!("the labels are not a list of strings ({e})"))?;
    check_labels(&labels, n).map_err(|e| e.to_string())?;
    Ok(labels)
}

/// Fragment prefix of a designer link: `design=<base64url of the family's JSON>`.
pub const DESIGN_PREFIX: &str = "design=";

/// A designer link's fragment for a family saved as `spec_json` ([`crate::state::FamilySpec::to_json`]).
pub fn encode_design(spec_json: &str) -> String {
    format!("{DESIGN_PREFIX}{}", URL_SAFE_NO_PAD.encode(spec_json))
}

/// The family JSON of a designer link's data (the part after [`DESIGN_PREFIX`]).
///
/// # Errors
/// Data that is too long, not base64url or not UTF-8.
pub fn decode_design(data: &str) -> Result<String, String> {
    if data.len() > 64 * 1024 {
        return Err("the design data is too long".into());
    }
    let bytes = URL_SAFE_NO_PAD.decode(data).map_err(|e| format!("the design data is not base64url ({e})"))?;
    String::from_utf8(bytes).map_err(|_| "the design data is not text".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_tampering() {
        for n in [1, 3, 8, 13, 64] {
            let m = BitMatrix::from_fn(n, |q, k| (q * 5 + k * 3) % 7 < 3);
            assert_eq!(decode(&format!("#{}", encode(&m, None))).unwrap(), Shared { mask: m, labels: None });
        }
        assert!(decode("").unwrap_err().contains("no size"));
        assert!(decode("n=4").unwrap_err().contains("no mask data"));
        assert!(decode("n=x&m=AA").unwrap_err().contains("not a number"));
        assert!(decode("n=0&m=").unwrap_err().contains("out of range"));
        assert!(decode("n=9999&m=AA").unwrap_err().contains("out of range"));
        assert!(decode("n=4&m=MQ").unwrap_err().contains("bytes, expected 2"));
        assert!(decode("n=4&m=M!c").unwrap_err().contains("base64url"));
        assert!(decode("n=3&m=_wE").is_ok());
        assert!(decode("n=3&m=_wM").unwrap_err().contains("past the last cell"));
    }

    #[test]
    fn labels_round_trip_and_tampered_labels_are_refused() {
        let m = BitMatrix::from_fn(3, |q, k| k <= q);
        let odd = vec!["<script>".to_string(), "x&l=y#z".to_string(), "ünï ☃ \"q\"".to_string()];
        let f = encode(&m, Some(&odd));
        assert_eq!(decode(&f).unwrap(), Shared { mask: m.clone(), labels: Some(odd) });
        let base = encode(&m, None);
        let with = |json: &str| format!("{base}&l={}", URL_SAFE_NO_PAD.encode(json));
        assert!(decode(&with("[\"a\",\"b\"]")).unwrap_err().contains("expected 3 labels"));
        assert!(decode(&with("{\"a\":1}")).unwrap_err().contains("not a list of strings"));
        assert!(decode(&with("[1,2,3]")).unwrap_err().contains("not a list of strings"));
        let long = format!("[\"{}\",\"b\",\"c\"]", "x".repeat(MAX_LABEL_CHARS + 1));
        assert!(decode(&with(&long)).unwrap_err().contains("limit"));
        assert!(decode(&format!("{base}&l=%%%")).unwrap_err().contains("base64url"));
        assert!(decode(&format!("{base}&l={}", "A".repeat(1 << 20))).unwrap_err().contains("too long"));
    }

    #[test]
    fn design_links_round_trip() {
        let json = r#"{"family":"butterfly","n":4}"#;
        let f = encode_design(json);
        assert!(f.starts_with(DESIGN_PREFIX));
        assert_eq!(decode_design(&f[DESIGN_PREFIX.len()..]).as_deref(), Ok(json));
        assert!(decode_design("%%").unwrap_err().contains("base64url"));
        assert!(decode_design(&URL_SAFE_NO_PAD.encode([0xff, 0xfe])).unwrap_err().contains("not text"));
        assert!(decode_design(&"A".repeat(70_000)).unwrap_err().contains("too long"));
    }
}
