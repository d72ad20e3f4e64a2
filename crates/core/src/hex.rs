//! Bytes as hex, for the requests of the lazily loaded modules (`flow_task`, `interop::wire`), and
//! a mask as its [`pack_bits`] in hex (`flow_task`, `interop::wire`'s exports, `derive::wire`).

use crate::bits::{BitMatrix, pack_bits, unpack_bits};

/// `bytes` as lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes.iter().flat_map(|b| [DIGITS[usize::from(b >> 4)] as char, DIGITS[usize::from(b & 15)] as char]).collect()
}

/// The bytes `text` spells in hex, or `None` for an odd length or a character that is no digit.
/// (Hex rather than base64: a decoder with no panic paths, so the lazily loaded modules carry no
/// panic locations.)
pub(crate) fn unhex(text: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    let text = text.as_bytes();
    if !text.len().is_multiple_of(2) {
        return None;
    }
    text.chunks_exact(2).map(|p| Some(digit(p[0])? << 4 | digit(p[1])?)).collect()
}

/// `m` as its [`pack_bits`] in hex (two digits a byte, low nibble second).
pub(crate) fn mask_hex(m: &BitMatrix) -> String {
    hex(&pack_bits(m))
}

/// The `n x n` mask [`mask_hex`] wrote as `text`, or why not (not hex, or not `ceil(n² / 8)`
/// bytes: so `text` bounds `n`, and no `n` overflows).
pub(crate) fn mask_unhex(text: &str, n: usize) -> Result<BitMatrix, String> {
    let bytes = unhex(text).ok_or("is not hex")?;
    if n.checked_mul(n).is_none_or(|cells| cells.div_ceil(8) != bytes.len()) {
        return Err(format!("has {} bytes, not those of {n} x {n} cells", bytes.len()));
    }
    unpack_bits(&bytes, n).map_err(|e| e.to_string())
}

/// A mask as serde writes it on the wires (`#[serde(with = "crate::hex::packed")]`): `[n, hex]`.
pub(crate) mod packed {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::bits::BitMatrix;

    /// `[n, mask_hex(m)]`.
    pub(crate) fn serialize<S: Serializer>(m: &BitMatrix, s: S) -> Result<S::Ok, S::Error> {
        (m.n(), super::mask_hex(m)).serialize(s)
    }

    /// The mask of `[n, hex]`, or serde's error naming what is wrong.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BitMatrix, D::Error> {
        let (n, text) = <(usize, String)>::deserialize(d)?;
        super::mask_unhex(&text, n).map_err(|e| serde::de::Error::custom(format!("a mask of n = {n} {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hex reads back every byte string, upper- or lowercase; odd lengths and other characters
    /// are refused.
    #[test]
    fn hex_reads_back() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(unhex(&hex(&bytes)).as_deref(), Some(&bytes[..]));
        assert_eq!(unhex(&hex(&bytes).to_uppercase()).as_deref(), Some(&bytes[..]));
        assert_eq!(hex(&[0x0f, 0xa0]), "0fa0");
        for bad in ["0", "0g", "é0", " 00", "0x"] {
            assert_eq!(unhex(bad), None, "{bad}");
        }
    }

    /// A mask reads back from its hex at its `n`; another `n`, an `n` whose square overflows, or
    /// a damaged text is refused with what is wrong.
    #[test]
    fn masks_read_back_and_wrong_sizes_are_refused() {
        for n in [0, 1, 3, 8, 13] {
            let m = BitMatrix::from_fn(n, |q, k| (q * 7 + k * 3) % 5 < 2);
            assert_eq!(mask_unhex(&mask_hex(&m), n), Ok(m.clone()));
            // (Sides whose squares fill the same bytes, 3 and 4, cannot be told apart: the wire
            // sends `n` beside the bytes.)
            assert!(mask_unhex(&mask_hex(&m), n + 2).is_err(), "n = {n} read at {}", n + 2);
        }
        let text = mask_hex(&BitMatrix::identity(4));
        for (bad, n, what) in [(text.as_str(), usize::MAX, "bytes"), ("zz", 4, "not hex"), ("ff", 4, "bytes")] {
            let e = mask_unhex(bad, n).expect_err(bad);
            assert!(e.contains(what), "{e}");
        }
    }
}
