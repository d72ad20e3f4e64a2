//! NumPy `.npy` files: a mask as an `(n, n)` boolean array, written and read without NumPy.
//!
//! Writing produces format version 1.0 with dtype `|b1` (one byte per cell, 0 or 1), C order, the
//! header padded with spaces to a multiple of 64 bytes exactly as `numpy.save` does, so
//! `numpy.load(path)` returns `mask[q][k]` (query `q` reads key `k`).
//!
//! Reading accepts versions 1.0, 2.0 and 3.0; dtype bool, signed or unsigned integers of 1, 2, 4 or
//! 8 bytes or floats of 4 or 8 bytes in either byte order, holding only 0 and 1; C or Fortran order;
//! shape `(n, n)` with `1 <= n <= MAX_N`. Anything else is refused with an [`NpyError`] naming the
//! offending part (magic, version, header, dtype, shape, data length, or the first bad cell).
//!
//! Complexity: `O(n² · itemsize)` time; writing allocates the `n²`-byte output once.

use crate::bits::BitMatrix;
use crate::format::{MAX_INPUT_BYTES, MAX_N};

/// The six bytes every `.npy` file starts with.
pub const NPY_MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Why a `.npy` file was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NpyError {
    /// The input does not start with [`NPY_MAGIC`].
    #[error("not a .npy file: it does not start with the \\x93NUMPY magic")]
    NotNpy,
    /// Input over the size limit.
    #[error(".npy input is {bytes} bytes; the limit is {limit} bytes")]
    TooLarge {
        /// Size of the input.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The file ends before a part it announces.
    #[error(".npy file is truncated: {what}")]
    Truncated {
        /// Which part is missing.
        what: String,
    },
    /// A format version other than 1.0, 2.0, 3.0.
    #[error(".npy format version {major}.{minor} is not supported (this build reads 1.0, 2.0 and 3.0)")]
    Version {
        /// Major version byte.
        major: u8,
        /// Minor version byte.
        minor: u8,
    },
    /// The header dictionary is malformed or lacks a key.
    #[error(".npy header: {reason}")]
    Header {
        /// What is wrong.
        reason: String,
    },
    /// A dtype this reader does not take.
    #[error(
        ".npy dtype {descr:?} is not supported: use bool ('|b1'), or integers ('<i8', '|u1', ...) or floats ('<f4', '<f8') holding only 0 and 1"
    )]
    Dtype {
        /// The `descr` string found.
        descr: String,
    },
    /// Not a square 2-D array of an accepted side.
    #[error(".npy shape {shape} is not a square matrix (n, n) with 1 <= n <= {MAX_N}")]
    Shape {
        /// The shape as written in the header.
        shape: String,
    },
    /// The data section has the wrong size.
    #[error(".npy data has {found} bytes; shape ({n}, {n}) of {descr:?} needs {expected}")]
    DataLength {
        /// Side.
        n: usize,
        /// The dtype.
        descr: String,
        /// Bytes needed.
        expected: usize,
        /// Bytes found.
        found: usize,
    },
    /// A cell holding something other than 0 or 1.
    #[error(".npy cell ({row}, {column}) holds {value}, not 0 or 1 (False or True)")]
    Value {
        /// 0-based row (query).
        row: usize,
        /// 0-based column (key).
        column: usize,
        /// The value found.
        value: String,
    },
}

/// Whether `bytes` starts with the `.npy` magic (how the CLI tells `.npy` from JSON and grids).
pub fn is_npy(bytes: &[u8]) -> bool {
    bytes.starts_with(NPY_MAGIC)
}

/// Writes `mask` as a version 1.0 `.npy` file of dtype `|b1` and shape `(n, n)`.
///
/// # Examples
/// ```
/// use hasseflow_core::{BitMatrix, interop::npy::{read_npy, write_npy}};
/// let m = BitMatrix::from_fn(5, |q, k| k <= q);
/// let bytes = write_npy(&m);
/// assert!(bytes.starts_with(b"\x93NUMPY\x01\x00"));
/// assert_eq!(read_npy(&bytes).unwrap(), m);
/// ```
pub fn write_npy(mask: &BitMatrix) -> Vec<u8> {
    let n = mask.n();
    let mut header = format!("{{'descr': '|b1', 'fortran_order': False, 'shape': ({n}, {n}), }}");
    // magic (6) + version (2) + length (2) + header + '\n' is padded to a multiple of 64.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + n * n);
    out.extend_from_slice(NPY_MAGIC);
    out.extend_from_slice(&[1, 0]);
    // The header is at most ~120 bytes, well inside u16.
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    let start = out.len();
    out.resize(start + n * n, 0);
    for q in 0..n {
        for k in mask.row_ones(q) {
            out[start + q * n + k] = 1;
        }
    }
    out
}

/// Element type of the data section.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Bool,
    Int,
    Uint,
    Float,
}

/// A parsed dtype: kind, item size, big-endian or not.
#[derive(Clone, Copy, Debug)]
struct Dtype {
    kind: Kind,
    size: usize,
    big: bool,
}

fn parse_descr(descr: &str) -> Option<Dtype> {
    let (order, rest) = match descr.chars().next()? {
        c @ ('<' | '>' | '|' | '=') => (c, &descr[1..]),
        _ => ('|', descr),
    };
    let mut chars = rest.chars();
    let kind = match chars.next()? {
        'b' => Kind::Bool,
        'i' => Kind::Int,
        'u' => Kind::Uint,
        'f' => Kind::Float,
        _ => return None,
    };
    let size: usize = chars.as_str().parse().ok()?;
    let ok = match kind {
        Kind::Bool => size == 1,
        Kind::Int | Kind::Uint => matches!(size, 1 | 2 | 4 | 8),
        Kind::Float => matches!(size, 4 | 8),
    };
    ok.then_some(Dtype { kind, size, big: order == '>' })
}

/// Reads an `(n, n)` array of 0/1 values as a mask (row `q` = query `q`).
///
/// # Errors
/// An [`NpyError`] for a wrong magic, an unsupported version, a malformed header, an unsupported
/// dtype, a non-square or out-of-range shape, a data section of the wrong size, or a cell that is
/// not 0 or 1. Never panics, whatever the bytes.
///
/// # Examples
/// ```
/// use hasseflow_core::interop::npy::read_npy;
/// let err = read_npy(b"\x93NUMPY\x09\x00").unwrap_err();
/// assert_eq!(err.to_string(), ".npy format version 9.0 is not supported (this build reads 1.0, 2.0 and 3.0)");
/// ```
pub fn read_npy(bytes: &[u8]) -> Result<BitMatrix, NpyError> {
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(NpyError::TooLarge { bytes: bytes.len(), limit: MAX_INPUT_BYTES });
    }
    if !is_npy(bytes) {
        return Err(NpyError::NotNpy);
    }
    let truncated = |what: &str| NpyError::Truncated { what: what.into() };
    let (major, minor) = match bytes.get(6..8) {
        Some(&[a, b]) => (a, b),
        _ => return Err(truncated("no version bytes after the magic")),
    };
    let (len_bytes, header_start): (usize, usize) = match (major, minor) {
        (1, 0) => (2, 10),
        (2, 0) | (3, 0) => (4, 12),
        _ => return Err(NpyError::Version { major, minor }),
    };
    let len_field = bytes.get(8..8 + len_bytes).ok_or_else(|| truncated("no header length"))?;
    let header_len = len_field.iter().rev().fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
    // Saturating: on 32-bit targets (wasm) a huge announced length must not overflow.
    let header_end = header_start.saturating_add(header_len);
    let header = bytes.get(header_start..header_end).ok_or_else(|| {
        truncated(&format!(
            "the header announces {header_len} bytes but only {} follow",
            bytes.len().saturating_sub(header_start)
        ))
    })?;
    let header = std::str::from_utf8(header).map_err(|e| NpyError::Header {
        reason: format!(
            "not {} text (invalid byte at offset {})",
            if major == 3 { "UTF-8" } else { "ASCII" },
            e.valid_up_to()
        ),
    })?;
    if major < 3 && !header.is_ascii() {
        return Err(NpyError::Header { reason: "not ASCII text (versions 1.0 and 2.0 require it)".into() });
    }
    let dict = parse_header(header)?;
    let descr = match dict.get("descr") {
        Some(Lit::Str(s)) => s.clone(),
        Some(other) => return Err(NpyError::Header { reason: format!("'descr' is {other}, expected a string") }),
        None => return Err(NpyError::Header { reason: "missing key 'descr'".into() }),
    };
    let fortran = match dict.get("fortran_order") {
        Some(Lit::Bool(b)) => *b,
        Some(other) => {
            return Err(NpyError::Header { reason: format!("'fortran_order' is {other}, expected True or False") });
        }
        None => return Err(NpyError::Header { reason: "missing key 'fortran_order'".into() }),
    };
    let shape = match dict.get("shape") {
        Some(Lit::Tuple(items)) => items,
        Some(other) => return Err(NpyError::Header { reason: format!("'shape' is {other}, expected a tuple") }),
        None => return Err(NpyError::Header { reason: "missing key 'shape'".into() }),
    };
    if let Some(key) = dict.keys().find(|k| !matches!(k.as_str(), "descr" | "fortran_order" | "shape")) {
        return Err(NpyError::Header { reason: format!("unexpected key '{key}'") });
    }
    let dtype = parse_descr(&descr).ok_or_else(|| NpyError::Dtype { descr: descr.clone() })?;
    let shape_text = Lit::Tuple(shape.clone()).to_string();
    let n = match shape.as_slice() {
        [Lit::Int(a), Lit::Int(b)] if a == b && *a >= 1 && *a as u128 <= MAX_N as u128 => *a as usize,
        _ => return Err(NpyError::Shape { shape: shape_text }),
    };
    let data = &bytes[header_end..];
    let expected = n * n * dtype.size;
    if data.len() != expected {
        return Err(NpyError::DataLength { n, descr, expected, found: data.len() });
    }
    let mut m = BitMatrix::zeros(n);
    for (i, cell) in data.chunks_exact(dtype.size).enumerate() {
        // C order: i = q*n + k; Fortran order: i = k*n + q.
        let (q, k) = if fortran { (i % n, i / n) } else { (i / n, i % n) };
        match cell_value(cell, dtype) {
            Ok(true) => m.set(q, k, true),
            Ok(false) => {}
            Err(value) => return Err(NpyError::Value { row: q, column: k, value }),
        }
    }
    Ok(m)
}

/// The cell as a boolean, or its value as text when it is neither 0 nor 1.
fn cell_value(cell: &[u8], dtype: Dtype) -> Result<bool, String> {
    let mut raw = [0u8; 8];
    raw[..cell.len()].copy_from_slice(cell);
    if dtype.big {
        raw[..cell.len()].reverse();
    }
    let bits = u64::from_le_bytes(raw);
    match dtype.kind {
        Kind::Bool | Kind::Uint => match bits {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(v.to_string()),
        },
        Kind::Int => match bits {
            0 => Ok(false),
            1 => Ok(true),
            v => {
                // Sign-extend to show negative values as such.
                let shift = 64 - 8 * dtype.size as u32;
                Err((((v << shift) as i64) >> shift).to_string())
            }
        },
        Kind::Float => {
            let x = if dtype.size == 4 { f64::from(f32::from_bits(bits as u32)) } else { f64::from_bits(bits) };
            if x == 0.0 {
                Ok(false)
            } else if x == 1.0 {
                Ok(true)
            } else {
                Err(x.to_string())
            }
        }
    }
}

/// A Python literal as found in a `.npy` header.
#[derive(Clone, Debug, PartialEq)]
enum Lit {
    Str(String),
    Bool(bool),
    Int(i128),
    None,
    Tuple(Vec<Lit>),
}

impl std::fmt::Display for Lit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Lit::Str(s) => write!(f, "'{s}'"),
            Lit::Bool(b) => f.write_str(if *b { "True" } else { "False" }),
            Lit::Int(i) => write!(f, "{i}"),
            Lit::None => f.write_str("None"),
            Lit::Tuple(items) => {
                f.write_str("(")?;
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{x}")?;
                }
                if items.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// A tiny parser for the header: a Python dict literal with string keys whose values are
/// strings, booleans, `None`, integers or tuples of those.
struct HeaderParser<'a> {
    s: &'a [u8],
    i: usize,
}

impl HeaderParser<'_> {
    fn err(&self, what: &str) -> NpyError {
        NpyError::Header { reason: format!("{what} at byte {}", self.i) }
    }

    fn skip_ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, c: u8) -> Result<(), NpyError> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.err(&format!("expected '{}'", c as char)))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Lit, NpyError> {
        if depth > 8 {
            return Err(self.err("nesting too deep"));
        }
        match self.peek() {
            Some(q @ (b'\'' | b'"')) => {
                self.i += 1;
                let start = self.i;
                while self.i < self.s.len() && self.s[self.i] != q {
                    if self.s[self.i] == b'\\' {
                        return Err(self.err("escape sequences in strings are not supported"));
                    }
                    self.i += 1;
                }
                if self.i >= self.s.len() {
                    return Err(self.err("unterminated string"));
                }
                let text = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
                self.i += 1;
                Ok(Lit::Str(text))
            }
            Some(b'(') => {
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    if self.peek() == Some(b')') {
                        self.i += 1;
                        return Ok(Lit::Tuple(items));
                    }
                    items.push(self.value(depth + 1)?);
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b')') => {}
                        _ => return Err(self.err("expected ',' or ')' in a tuple")),
                    }
                }
            }
            Some(c) if c.is_ascii_digit() || c == b'-' => {
                let start = self.i;
                self.i += 1;
                while self.i < self.s.len() && (self.s[self.i].is_ascii_digit() || self.s[self.i] == b'_') {
                    self.i += 1;
                }
                let text: String =
                    String::from_utf8_lossy(&self.s[start..self.i]).chars().filter(|&c| c != '_').collect();
                text.parse::<i128>().map(Lit::Int).map_err(|_| self.err(&format!("bad integer '{text}'")))
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let start = self.i;
                while self.i < self.s.len() && self.s[self.i].is_ascii_alphanumeric() {
                    self.i += 1;
                }
                match &self.s[start..self.i] {
                    b"True" => Ok(Lit::Bool(true)),
                    b"False" => Ok(Lit::Bool(false)),
                    b"None" => Ok(Lit::None),
                    other => Err(self.err(&format!("unknown name '{}'", String::from_utf8_lossy(other)))),
                }
            }
            Some(c) => Err(self.err(&format!("unexpected character {:?}", c as char))),
            None => Err(self.err("unexpected end")),
        }
    }
}

fn parse_header(text: &str) -> Result<std::collections::BTreeMap<String, Lit>, NpyError> {
    let mut p = HeaderParser { s: text.as_bytes(), i: 0 };
    p.expect(b'{')?;
    let mut out = std::collections::BTreeMap::new();
    loop {
        if p.peek() == Some(b'}') {
            p.i += 1;
            break;
        }
        let key = match p.value(0)? {
            Lit::Str(k) => k,
            other => return Err(p.err(&format!("dictionary key {other} is not a string"))),
        };
        p.expect(b':')?;
        let value = p.value(0)?;
        if out.insert(key.clone(), value).is_some() {
            return Err(NpyError::Header { reason: format!("key '{key}' given twice") });
        }
        match p.peek() {
            Some(b',') => p.i += 1,
            Some(b'}') => {}
            _ => return Err(p.err("expected ',' or '}' in the dictionary")),
        }
    }
    if p.peek().is_some() {
        return Err(p.err("unexpected text after the dictionary"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    fn npy(version: (u8, u8), header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = NPY_MAGIC.to_vec();
        out.extend_from_slice(&[version.0, version.1]);
        if version.0 == 1 {
            out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        } else {
            out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        }
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    fn err(bytes: &[u8]) -> String {
        read_npy(bytes).unwrap_err().to_string()
    }

    #[test]
    fn round_trip_random_masks() {
        let mut rng = SplitMix64::new(7);
        for n in [1, 2, 3, 7, 63, 64, 65, 130] {
            let m = BitMatrix::from_fn(n, |_, _| rng.next_f64() < 0.3);
            let bytes = write_npy(&m);
            let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
            assert_eq!((10 + header_len) % 64, 0, "header aligned to 64 bytes");
            assert_eq!(bytes.len(), 10 + header_len + n * n);
            assert_eq!(read_npy(&bytes).unwrap(), m, "n = {n}");
        }
    }

    #[test]
    fn header_is_what_numpy_writes() {
        let bytes = write_npy(&BitMatrix::identity(3));
        let text = std::str::from_utf8(&bytes[10..bytes.len() - 9]).unwrap();
        assert!(text.starts_with("{'descr': '|b1', 'fortran_order': False, 'shape': (3, 3), }"));
        assert!(text.ends_with(" \n"));
    }

    #[test]
    fn other_dtypes_orders_and_versions() {
        let causal = BitMatrix::from_fn(2, |q, k| k <= q);
        // int64 little-endian, C order: [[1, 0], [1, 1]].
        let mut data = Vec::new();
        for v in [1i64, 0, 1, 1] {
            data.extend_from_slice(&v.to_le_bytes());
        }
        let h = "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }\n";
        assert_eq!(read_npy(&npy((1, 0), h, &data)).unwrap(), causal);
        assert_eq!(read_npy(&npy((2, 0), h, &data)).unwrap(), causal);
        // big-endian float32, Fortran order: columns [1, 1], [0, 1].
        let mut data = Vec::new();
        for v in [1f32, 1.0, 0.0, 1.0] {
            data.extend_from_slice(&v.to_be_bytes());
        }
        let h = "{\"descr\": \">f4\", \"fortran_order\": True, \"shape\": (2,2)}";
        assert_eq!(read_npy(&npy((3, 0), h, &data)).unwrap(), causal);
    }

    #[test]
    fn malformed_files_are_refused_clearly() {
        let good = write_npy(&BitMatrix::identity(2));
        let h = |s: &str| npy((1, 0), s, &[1, 0, 0, 1]);
        assert!(err(b"{\"format\": 1}").contains("\\x93NUMPY magic"));
        assert!(err(b"\x93NUMPY").contains("truncated: no version"));
        assert!(err(b"\x93NUMPY\x01\x00\x05").contains("truncated: no header length"));
        assert!(err(&good[..20]).contains("announces"));
        assert!(err(&good[..good.len() - 1]).contains("data has 3 bytes; shape (2, 2) of \"|b1\" needs 4"));
        assert!(err(&[&good[..], &[0]].concat()).contains("data has 5 bytes"));
        assert!(
            err(&npy((1, 0), "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 2)}", &[1, 2, 0, 1]))
                .contains("cell (0, 1) holds 2")
        );
        assert!(
            err(&npy((1, 0), "{'descr': '<i2', 'fortran_order': False, 'shape': (1, 1)}", &[0xff, 0xff]))
                .contains("holds -1")
        );
        assert!(err(&h("{'descr': '<c16', 'fortran_order': False, 'shape': (2, 2)}")).contains("dtype \"<c16\""));
        assert!(err(&h("{'descr': '|b1', 'fortran_order': False, 'shape': (4,)}")).contains("shape (4,)"));
        assert!(err(&h("{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3)}")).contains("shape (2, 3)"));
        assert!(err(&h("{'descr': '|b1', 'fortran_order': False, 'shape': (0, 0)}")).contains("shape (0, 0)"));
        assert!(err(&h("{'descr': '|b1', 'fortran_order': False, 'shape': (9000, 9000)}")).contains("n <= 8192"));
        assert!(err(&h("{'descr': '|b1', 'shape': (2, 2)}")).contains("missing key 'fortran_order'"));
        assert!(err(&h("{'descr': '|b1', 'fortran_order': 0, 'shape': (2, 2)}")).contains("expected True or False"));
        assert!(err(&h("{'descr': '|b1', 'fortran_order': False, 'shape': (2, 2), 'x': 1}")).contains("'x'"));
        assert!(err(&h("{'descr': '|b1', 'fortran_order': False, 'shape': (2, 2)")).contains("expected ',' or '}'"));
        assert!(err(&h("{'descr': '|b1' 'fortran_order': False}")).contains("expected ',' or '}'"));
        assert!(err(&h("[1, 2]")).contains("expected '{'"));
        assert!(err(&h("{'descr': '|b1', 'fortran_order': Nope, 'shape': (2, 2)}")).contains("unknown name 'Nope'"));
        assert!(err(b"\x93NUMPY\x09\x00").contains("version 9.0"));
        assert!(err(b"\x93NUMPY\x02\x00\xff\xff\xff\xff{").contains("announces 4294967295 bytes"));
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut rng = SplitMix64::new(11);
        let base = write_npy(&BitMatrix::from_fn(5, |q, k| k <= q));
        for _ in 0..2000 {
            let mut b = base.clone();
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(b.len());
                b[i] = rng.below(256) as u8;
            }
            b.truncate(rng.below(b.len() + 1));
            let _ = read_npy(&b);
        }
    }
}
