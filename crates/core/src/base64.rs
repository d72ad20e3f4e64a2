//! Base64 (RFC 4648), the two forms hasseflow writes and reads: the standard alphabet with `=`
//! padding (a mask file's `packed`, a flex export's table, export bytes on the formats module's
//! wire) and the URL-safe alphabet without padding (share links).
//!
//! Decoding is strict, as Python's `base64.b64decode(validate=True)` and the `base64` crate's
//! canonical modes are: no whitespace, padding exactly where the length needs it (and none in the
//! URL-safe form), and no bits set past the last byte. Every error names the first fault; no input
//! panics. (Our own codec rather than the `base64` crate: the first download is every visitor's,
//! and the crate's general engine cost it 1.3 KB gzipped.)

/// One of the two forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Base64 {
    /// `-` and `_` for the last two digits, no padding; else `+`, `/` and `=` padding.
    url_safe: bool,
}

/// The standard alphabet, padded with `=`.
pub const STANDARD: Base64 = Base64 { url_safe: false };

/// The URL-safe alphabet, unpadded.
pub const URL_SAFE_NO_PAD: Base64 = Base64 { url_safe: true };

const STANDARD_DIGITS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE_DIGITS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Not a digit, in [`values`].
const NOT_A_DIGIT: u8 = 0xff;

/// Each byte's value as a digit of `digits`, or [`NOT_A_DIGIT`].
const fn values(digits: &[u8; 64]) -> [u8; 256] {
    let mut values = [NOT_A_DIGIT; 256];
    let mut i = 0;
    while i < 64 {
        values[digits[i] as usize] = i as u8;
        i += 1;
    }
    values
}

const STANDARD_VALUES: [u8; 256] = values(STANDARD_DIGITS);
const URL_SAFE_VALUES: [u8; 256] = values(URL_SAFE_DIGITS);

/// Why a text is not base64 of this form: its first fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// A byte that is no digit of the alphabet, where a digit must stand.
    #[error("{} at {at} is not a base64 digit", shown(*byte))]
    NotADigit {
        /// Its offset in the text.
        at: usize,
        /// The byte.
        byte: u8,
    },
    /// A length that is no whole number of bytes (`4k + 1` digits), or (padded) no multiple of 4.
    #[error("{0} characters are not base64 of whole bytes")]
    Length(usize),
    /// Padding in the unpadded form.
    #[error("'=' at {0}: this form has no padding")]
    Padding(usize),
    /// The last digit has bits set past the last byte (so another text spells the same bytes).
    #[error("the last digit has bits set past the last byte")]
    TrailingBits,
}

/// A byte as an error shows it: quoted when printable ASCII, else in hex.
fn shown(byte: u8) -> String {
    if byte.is_ascii_graphic() || byte == b' ' { format!("'{}'", byte as char) } else { format!("byte {byte:#04x}") }
}

impl Base64 {
    fn digits(self) -> &'static [u8; 64] {
        if self.url_safe { URL_SAFE_DIGITS } else { STANDARD_DIGITS }
    }

    /// `bytes` in this form.
    pub fn encode(self, bytes: impl AsRef<[u8]>) -> String {
        self.encode_bytes(bytes.as_ref())
    }

    /// [`Self::encode`], one copy for every caller (the first download is smaller without copies
    /// inlined into the app's panels).
    #[inline(never)]
    fn encode_bytes(self, bytes: &[u8]) -> String {
        let digits = self.digits();
        let digit = |group: u32, i: usize| digits[(group >> (18 - 6 * i)) as usize & 63];
        let mut out = Vec::with_capacity(bytes.len().div_ceil(3) * 4);
        let whole = bytes.len() / 3 * 3;
        for c in bytes[..whole].chunks_exact(3) {
            let group = u32::from(c[0]) << 16 | u32::from(c[1]) << 8 | u32::from(c[2]);
            out.extend_from_slice(&[digit(group, 0), digit(group, 1), digit(group, 2), digit(group, 3)]);
        }
        let tail = &bytes[whole..];
        if !tail.is_empty() {
            let byte = |i: usize| u32::from(tail.get(i).copied().unwrap_or(0));
            let group = byte(0) << 16 | byte(1) << 8;
            out.extend((0..=tail.len()).map(|i| digit(group, i)));
            if !self.url_safe {
                out.extend(std::iter::repeat_n(b'=', 3 - tail.len()));
            }
        }
        // Digits are ASCII.
        String::from_utf8(out).unwrap_or_default()
    }

    /// The bytes `text` spells in this form.
    ///
    /// # Errors
    /// The text's first fault ([`DecodeError`]).
    pub fn decode(self, text: impl AsRef<[u8]>) -> Result<Vec<u8>, DecodeError> {
        self.decode_bytes(text.as_ref())
    }

    /// [`Self::decode`], one copy for every caller.
    #[inline(never)]
    fn decode_bytes(self, text: &[u8]) -> Result<Vec<u8>, DecodeError> {
        let values = if self.url_safe { &URL_SAFE_VALUES } else { &STANDARD_VALUES };
        let body = if self.url_safe {
            text
        } else {
            if !text.len().is_multiple_of(4) {
                return Err(DecodeError::Length(text.len()));
            }
            // At most two `=`, at the end; any other is a byte out of place below.
            let pads = text.iter().rev().take(2).take_while(|&&c| c == b'=').count();
            &text[..text.len() - pads]
        };
        if body.len() % 4 == 1 {
            return Err(DecodeError::Length(text.len()));
        }
        let fault = |at: usize| {
            // The first non-digit from `at` (there is one).
            let at = at + body[at..].iter().position(|&c| values[usize::from(c)] == NOT_A_DIGIT).unwrap_or(0);
            let c = body.get(at).copied().unwrap_or(0);
            if c == b'=' && self.url_safe { DecodeError::Padding(at) } else { DecodeError::NotADigit { at, byte: c } }
        };
        // Whole groups of four digits: a non-digit's value has its top bits set (checked once a
        // group; 2.3x the speed of a check per digit).
        let whole = body.len() / 4 * 4;
        let mut out = Vec::with_capacity(whole / 4 * 3 + 2);
        for (g, c) in body[..whole].chunks_exact(4).enumerate() {
            let v = [
                values[usize::from(c[0])],
                values[usize::from(c[1])],
                values[usize::from(c[2])],
                values[usize::from(c[3])],
            ];
            if (v[0] | v[1] | v[2] | v[3]) & !63 != 0 {
                return Err(fault(4 * g));
            }
            let group = u32::from(v[0]) << 18 | u32::from(v[1]) << 12 | u32::from(v[2]) << 6 | u32::from(v[3]);
            out.extend_from_slice(&[(group >> 16) as u8, (group >> 8) as u8, group as u8]);
        }
        // A short last group of two or three digits: its bits past its bytes must be zero.
        let tail = &body[whole..];
        if !tail.is_empty() {
            let mut group = 0u32;
            for &c in tail {
                let value = values[usize::from(c)];
                if value == NOT_A_DIGIT {
                    return Err(fault(whole));
                }
                group = group << 6 | u32::from(value);
            }
            let spare = 6 * tail.len() % 8;
            if group & ((1 << spare) - 1) != 0 {
                return Err(DecodeError::TrailingBits);
            }
            let group = group >> spare;
            out.extend((0..6 * tail.len() / 8).rev().map(|i| (group >> (8 * i)) as u8));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use ::base64::Engine as _;

    use super::*;
    use crate::rng::SplitMix64;

    /// The `base64` crate is the oracle: the same text for every byte string, and for texts
    /// drawn from each alphabet, its padding, other bytes and every length, the same bytes or
    /// both refusing.
    #[test]
    fn agrees_with_the_base64_crate() {
        let ours = [STANDARD, URL_SAFE_NO_PAD];
        let theirs = [::base64::engine::general_purpose::STANDARD, ::base64::engine::general_purpose::URL_SAFE_NO_PAD];
        let mut rng = SplitMix64::new(31);
        for len in 0..200 {
            let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            for (o, t) in ours.iter().zip(&theirs) {
                let text = o.encode(&bytes);
                assert_eq!(text, t.encode(&bytes), "{o:?} of {bytes:?}");
                assert_eq!(o.decode(&text), Ok(bytes.clone()), "{o:?} of {bytes:?}");
            }
        }
        let pool = b"AZaz09+/-_=\n !\xff\xc3\xa9Qg";
        let mut accepted = [0; 2];
        for _ in 0..60_000 {
            let len = (rng.next_u64() % 14) as usize;
            // Mostly digits (so that many texts are valid), sometimes anything from the pool.
            let text: Vec<u8> = (0..len)
                .map(|_| {
                    let r = rng.next_u64();
                    if r.is_multiple_of(8) {
                        pool[(r >> 8) as usize % pool.len()]
                    } else {
                        STANDARD_DIGITS[(r >> 8) as usize % 64]
                    }
                })
                .collect();
            // Sometimes a text that ends in padding.
            let mut text = text;
            if rng.next_u64().is_multiple_of(4) {
                text.extend(std::iter::repeat_n(b'=', 1 + (rng.next_u64() % 2) as usize));
            }
            for (i, (o, t)) in ours.iter().zip(&theirs).enumerate() {
                let (mine, oracle) = (o.decode(&text), t.decode(&text));
                assert_eq!(
                    mine.as_ref().ok(),
                    oracle.as_ref().ok(),
                    "{o:?} {:?}: {mine:?} vs {oracle:?}",
                    String::from_utf8_lossy(&text)
                );
                accepted[i] += usize::from(mine.is_ok());
            }
        }
        // Both forms saw texts they read and texts they refused.
        assert!(accepted.iter().all(|&a| a > 1_000 && a < 59_000), "{accepted:?}");
    }

    /// Each fault is named, at its place.
    #[test]
    fn errors_name_the_fault() {
        let said = |f: Base64, t: &str| f.decode(t).expect_err(t).to_string();
        assert_eq!(said(STANDARD, "ab!d"), "'!' at 2 is not a base64 digit");
        assert_eq!(said(STANDARD, "abc"), "3 characters are not base64 of whole bytes");
        assert_eq!(said(STANDARD, "a==="), "'=' at 1 is not a base64 digit");
        assert_eq!(said(STANDARD, "ab-_"), "'-' at 2 is not a base64 digit");
        assert_eq!(said(STANDARD, "ab=="), "the last digit has bits set past the last byte");
        assert_eq!(said(URL_SAFE_NO_PAD, "abcde"), "5 characters are not base64 of whole bytes");
        assert_eq!(said(URL_SAFE_NO_PAD, "ab=="), "'=' at 2: this form has no padding");
        assert_eq!(said(URL_SAFE_NO_PAD, "a+"), "'+' at 1 is not a base64 digit");
        assert_eq!(said(URL_SAFE_NO_PAD, "Q\u{e9}"), "byte 0xc3 at 1 is not a base64 digit");
        assert_eq!(STANDARD.decode("QQ=="), Ok(b"A".to_vec()));
        assert_eq!(URL_SAFE_NO_PAD.decode("-_8"), Ok(vec![0xfb, 0xff]));
        assert_eq!(STANDARD.decode(""), Ok(vec![]));
    }
}
