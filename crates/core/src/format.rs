//! The mask file formats: versioned JSON (`hasseflow-mask` v1) and plain text grids.
//! Only this module knows the schema; see `docs/FORMAT.md` for the user-facing description.
//!
//! Parsing is strict and explains itself: every failure is a [`FormatError`] naming where and what.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::base64::STANDARD as BASE64;
use crate::bits::{BitMatrix, pack_bits, unpack_bits};
use crate::stack::{Layer, LayerStack, StackError, StackMode};

/// Value of the `format` field.
pub const FORMAT_TAG: &str = "hasseflow-mask";
/// The version this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;
/// Largest mask side accepted.
pub const MAX_N: usize = 8192;
/// Largest input accepted, in bytes (an 8192 mask as row strings is about 67 MB).
pub const MAX_INPUT_BYTES: usize = 96 * 1024 * 1024;
/// Longest position label, in characters.
pub const MAX_LABEL_CHARS: usize = 256;
/// [`Encoding::Auto`] writes row strings up to this side, the packed form above it.
pub const ROWS_UP_TO: usize = 512;

/// Why raw bytes are not acceptable text input, whatever format they claim to be. Shared by every
/// text format's error type (`FormatError`, the family file's `FamilyError`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// Input over [`MAX_INPUT_BYTES`].
    #[error("input is {bytes} bytes; the limit is {limit} bytes")]
    TooLarge {
        /// Size of the input.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// Input is not UTF-8.
    #[error("input is not UTF-8 text (invalid byte at offset {offset})")]
    NotUtf8 {
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
}

/// Checks the size limit and decodes UTF-8: the first step of every text parser.
pub fn text_input(input: &[u8]) -> Result<&str, InputError> {
    if input.len() > MAX_INPUT_BYTES {
        return Err(InputError::TooLarge { bytes: input.len(), limit: MAX_INPUT_BYTES });
    }
    std::str::from_utf8(input).map_err(|e| InputError::NotUtf8 { offset: e.valid_up_to() })
}

/// A serde_json error as (line, column, message without serde's " at line L column C" suffix).
pub fn json_error_parts(e: &serde_json::Error) -> (usize, usize, String) {
    let message = e.to_string();
    let message = message.split(" at line ").next().unwrap_or(&message).to_string();
    (e.line(), e.column(), message)
}

/// A parse or validation failure, with the data needed to explain it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// Too large or not UTF-8.
    #[error(transparent)]
    Input(#[from] InputError),
    /// Empty input.
    #[error("input is empty")]
    Empty,
    /// JSON syntax or a field of the wrong type.
    #[error("malformed JSON at line {line}, column {column}: {message}")]
    Json {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde_json's description.
        message: String,
    },
    /// `format` is not [`FORMAT_TAG`].
    #[error("not a hasseflow mask file: \"format\" is {found:?}, expected \"{FORMAT_TAG}\"")]
    WrongTag {
        /// Value found.
        found: String,
    },
    /// A version this build cannot read.
    #[error("unsupported format version {found}; this build reads version {FORMAT_VERSION}")]
    UnsupportedVersion {
        /// Version found.
        found: u64,
    },
    /// `n` outside `1..=MAX_N`.
    #[error("mask size n = {n} is out of range 1..={MAX_N}")]
    SizeOutOfRange {
        /// Size given.
        n: usize,
    },
    /// Neither `rows` nor `packed`, or both.
    #[error("{where_}: give the mask as exactly one of \"rows\" or \"packed\"")]
    MaskEncoding {
        /// Which mask (`mask`, `stack layer 2 head 0`).
        where_: String,
    },
    /// Wrong number of rows.
    #[error("{where_}: expected {expected} rows, found {found}")]
    RowCount {
        /// Which mask.
        where_: String,
        /// `n`.
        expected: usize,
        /// Rows found.
        found: usize,
    },
    /// A row of the wrong length.
    #[error("{where_}: row {row} has {found} columns, expected {expected}")]
    RowLength {
        /// Which mask.
        where_: String,
        /// 0-based row.
        row: usize,
        /// `n`.
        expected: usize,
        /// Columns found.
        found: usize,
    },
    /// A character other than `1`, `0`, `.`.
    #[error("{where_}: row {row}, column {column}: unexpected character {ch:?} (use '1' and '.' or '0')")]
    BadChar {
        /// Which mask.
        where_: String,
        /// 0-based row.
        row: usize,
        /// 0-based column.
        column: usize,
        /// The character.
        ch: char,
    },
    /// A text grid whose row count differs from its row length.
    #[error("text grid is not square: {rows} rows of {columns} columns")]
    NotSquare {
        /// Rows found.
        rows: usize,
        /// Columns of the first row.
        columns: usize,
    },
    /// Bad packed data.
    #[error("{where_}: packed data {reason}")]
    Packed {
        /// Which mask.
        where_: String,
        /// What is wrong.
        reason: String,
    },
    /// Wrong number of labels, or an overlong label.
    #[error("labels: {reason}")]
    Labels {
        /// What is wrong.
        reason: String,
    },
    /// An invalid layer stack.
    #[error("stack: {0}")]
    Stack(#[from] StackError),
}

/// How the mask is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Encoding {
    /// Row strings up to [`ROWS_UP_TO`], packed above.
    #[default]
    Auto,
    /// Row strings of `1` and `.`.
    Rows,
    /// Base64 of the row-major bits.
    Packed,
}

/// Where a mask came from: a preset and its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// Preset name.
    pub preset: String,
    /// The preset's `n` (tokens; may differ from the mask side for two-stream layouts).
    pub n: usize,
    /// Parameters as given.
    #[serde(default)]
    pub params: BTreeMap<String, serde_json::Value>,
}

/// A mask with its optional labels, provenance and layer stack.
#[derive(Clone, Debug, PartialEq)]
pub struct MaskFile {
    /// The mask (used in every layer unless a stack is given).
    pub mask: BitMatrix,
    /// One label per position.
    pub labels: Option<Vec<String>>,
    /// Where the mask came from.
    pub provenance: Option<Provenance>,
    /// A per-layer stack and how it runs.
    pub stack: Option<(LayerStack, StackMode)>,
}

impl MaskFile {
    /// A file holding just `mask`.
    pub fn new(mask: BitMatrix) -> Self {
        MaskFile { mask, labels: None, provenance: None, stack: None }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMask {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rows: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    packed: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLayer {
    heads: Vec<RawMask>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "lowercase")]
enum RawMode {
    Once,
    Repeat,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStack {
    #[serde(default = "default_mode")]
    mode: RawMode,
    layers: Vec<RawLayer>,
}

fn default_mode() -> RawMode {
    RawMode::Once
}

/// A mask file as JSON. Its provenance is borrowed from the [`MaskFile`] when it is written (a
/// copy of its parameters' JSON cost the mask_mod reader's module 0.6 KB gzipped), owned when
/// it is read.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile<'a> {
    format: String,
    version: u64,
    n: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    labels: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rows: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    packed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    provenance: Option<Cow<'a, Provenance>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stack: Option<RawStack>,
}

/// Checks position labels for a mask of `n` positions: exactly `n`, each at most
/// [`MAX_LABEL_CHARS`] characters. Any text is allowed (labels are shown as text, never markup).
///
/// # Errors
/// [`FormatError::Labels`] saying which rule failed.
pub fn check_labels(labels: &[String], n: usize) -> Result<(), FormatError> {
    if labels.len() != n {
        return Err(FormatError::Labels { reason: format!("expected {n} labels, found {}", labels.len()) });
    }
    if let Some((i, l)) = labels.iter().enumerate().find(|(_, l)| l.chars().count() > MAX_LABEL_CHARS) {
        return Err(FormatError::Labels {
            reason: format!("label {i} has {} characters; the limit is {MAX_LABEL_CHARS}", l.chars().count()),
        });
    }
    Ok(())
}

/// Parses a mask file: JSON when the first non-blank character is `{`, else a text grid.
///
/// # Errors
/// Any [`FormatError`]; never panics, whatever the bytes.
///
/// # Examples
/// ```
/// use hasseflow_core::format::parse_mask_file;
/// let f = parse_mask_file(b"1..\n11.\n111\n").unwrap();
/// assert_eq!(f.mask.count_ones(), 6);
/// let err = parse_mask_file(b"1..\n11\n111\n").unwrap_err();
/// assert_eq!(err.to_string(), "text grid: row 1 has 2 columns, expected 3");
/// ```
pub fn parse_mask_file(input: &[u8]) -> Result<MaskFile, FormatError> {
    let text = text_input(input)?;
    match text.trim_start().chars().next() {
        None => Err(FormatError::Empty),
        Some('{') => parse_json(text),
        Some(_) => parse_grid(text).map(MaskFile::new),
    }
}

fn parse_json(text: &str) -> Result<MaskFile, FormatError> {
    // Check the envelope first, so a file of another version gets the right message even if its
    // fields differ from ours.
    let value: serde_json::Value = serde_json::from_str(text).map_err(json_error)?;
    let format = value.get("format").and_then(|f| f.as_str()).unwrap_or_default();
    if format != FORMAT_TAG {
        let found = value.get("format").map(|f| f.to_string()).unwrap_or_else(|| "missing".into());
        return Err(FormatError::WrongTag { found: found.trim_matches('"').to_string() });
    }
    if let Some(v) = value.get("version").and_then(|v| v.as_u64())
        && v != u64::from(FORMAT_VERSION)
    {
        return Err(FormatError::UnsupportedVersion { found: v });
    }
    let raw: RawFile<'_> = serde_json::from_str(text).map_err(json_error)?;
    let n = raw.n;
    if n == 0 || n > MAX_N {
        return Err(FormatError::SizeOutOfRange { n });
    }
    let mask = decode_mask(&RawMask { rows: raw.rows, packed: raw.packed }, n, "mask")?;
    if let Some(labels) = &raw.labels {
        check_labels(labels, n)?;
    }
    let stack = match raw.stack {
        None => None,
        Some(s) => {
            let mut layers = Vec::with_capacity(s.layers.len());
            for (l, layer) in s.layers.iter().enumerate() {
                let heads = layer
                    .heads
                    .iter()
                    .enumerate()
                    .map(|(h, m)| decode_mask(m, n, &format!("stack layer {l} head {h}")))
                    .collect::<Result<Vec<_>, _>>()?;
                layers.push(Layer { heads });
            }
            let mode = match s.mode {
                RawMode::Once => StackMode::Once,
                RawMode::Repeat => StackMode::Repeat,
            };
            Some((LayerStack::new(layers)?, mode))
        }
    };
    Ok(MaskFile { mask, labels: raw.labels, provenance: raw.provenance.map(Cow::into_owned), stack })
}

fn json_error(e: serde_json::Error) -> FormatError {
    let (line, column, message) = json_error_parts(&e);
    FormatError::Json { line, column, message }
}

fn decode_mask(raw: &RawMask, n: usize, where_: &str) -> Result<BitMatrix, FormatError> {
    match (&raw.rows, &raw.packed) {
        (Some(rows), None) => {
            if rows.len() != n {
                return Err(FormatError::RowCount { where_: where_.into(), expected: n, found: rows.len() });
            }
            decode_rows(rows.iter().map(String::as_str), n, where_)
        }
        (None, Some(packed)) => decode_packed(packed, n, where_),
        _ => Err(FormatError::MaskEncoding { where_: where_.into() }),
    }
}

fn decode_rows<'a>(rows: impl Iterator<Item = &'a str>, n: usize, where_: &str) -> Result<BitMatrix, FormatError> {
    let mut m = BitMatrix::zeros(n);
    for (q, row) in rows.enumerate() {
        let len = row.chars().count();
        if len != n {
            return Err(FormatError::RowLength { where_: where_.into(), row: q, expected: n, found: len });
        }
        for (k, ch) in row.chars().enumerate() {
            if !is_cell(ch) {
                return Err(FormatError::BadChar { where_: where_.into(), row: q, column: k, ch });
            }
            if ch == '1' {
                m.set(q, k, true);
            }
        }
    }
    Ok(m)
}

/// Whether `ch` is a cell of a row: `1` (set), `.` or `0` (unset).
fn is_cell(ch: char) -> bool {
    matches!(ch, '1' | '.' | '0')
}

fn decode_packed(packed: &str, n: usize, where_: &str) -> Result<BitMatrix, FormatError> {
    let bad = |reason: String| FormatError::Packed { where_: where_.into(), reason };
    let expected = (n * n).div_ceil(8);
    // Reject before decoding so that a huge string costs nothing.
    if packed.len() > expected.div_ceil(3) * 4 + 4 {
        return Err(bad(format!("is too long for n = {n}: {} base64 characters", packed.len())));
    }
    let bytes = BASE64.decode(packed.trim()).map_err(|e| bad(format!("is not valid base64: {e}")))?;
    unpack_bits(&bytes, n).map_err(|e| bad(e.to_string()))
}

/// Standard base64 of [`pack_bits`].
fn encode_packed(m: &BitMatrix) -> String {
    BASE64.encode(pack_bits(m))
}

fn encode_mask(m: &BitMatrix, encoding: Encoding) -> RawMask {
    let packed = match encoding {
        Encoding::Auto => m.n() > ROWS_UP_TO,
        Encoding::Rows => false,
        Encoding::Packed => true,
    };
    if packed {
        RawMask { rows: None, packed: Some(encode_packed(m)) }
    } else {
        RawMask { rows: Some(m.to_row_strings()), packed: None }
    }
}

/// Parses a plain text grid: one row per line of `1` and `.`/`0` (row `q`, column `k`: `q` reads
/// `k`). Blank lines and lines starting with `#` are skipped; trailing whitespace is ignored.
pub fn parse_grid(text: &str) -> Result<BitMatrix, FormatError> {
    let rows: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    let n = rows.len();
    if n == 0 {
        return Err(FormatError::Empty);
    }
    if n > MAX_N {
        return Err(FormatError::SizeOutOfRange { n });
    }
    // A character that is no cell first: a text that is not a grid (Python without a `def`, say)
    // is then named by what it holds, not by its shape.
    for (q, row) in rows.iter().enumerate() {
        if let Some((k, ch)) = row.chars().enumerate().find(|&(_, c)| !is_cell(c)) {
            return Err(FormatError::BadChar { where_: "text grid".into(), row: q, column: k, ch });
        }
    }
    let columns = rows[0].chars().count();
    if columns != n {
        // A row-length error is more precise when only some rows differ.
        if let Some(row) = rows.iter().position(|r| r.chars().count() != columns) {
            return Err(FormatError::RowLength {
                where_: "text grid".into(),
                row,
                expected: columns,
                found: rows[row].chars().count(),
            });
        }
        return Err(FormatError::NotSquare { rows: n, columns });
    }
    decode_rows(rows.into_iter(), n, "text grid")
}

/// Writes a text grid (`1` and `.`, one row per line, trailing newline).
pub fn write_grid(m: &BitMatrix) -> String {
    let mut out = String::with_capacity(m.n() * (m.n() + 1));
    for row in m.to_row_strings() {
        out.push_str(&row);
        out.push('\n');
    }
    out
}

/// Writes the JSON format (pretty-printed, trailing newline).
///
/// # Examples
/// ```
/// use hasseflow_core::{BitMatrix, format::{write_json, parse_mask_file, MaskFile, Encoding}};
/// let file = MaskFile::new(BitMatrix::from_fn(3, |q, k| k <= q));
/// let text = write_json(&file, Encoding::Auto);
/// assert!(text.contains("\"rows\""));
/// assert_eq!(parse_mask_file(text.as_bytes()).unwrap(), file);
/// ```
pub fn write_json(file: &MaskFile, encoding: Encoding) -> String {
    let mut text = serde_json::to_string_pretty(&raw_file(file, encoding)).expect("serialising plain data cannot fail");
    text.push('\n');
    text
}

/// The same file as [`write_json`], packed and on one line, for the wire between the app and
/// its lazily loaded modules (`interop::wire`), which [`parse_mask_file`] reads as any mask file:
/// without the pretty printer, which the mask_mod reader's module then need not carry.
pub fn write_json_compact(file: &MaskFile) -> String {
    serde_json::to_string(&raw_file(file, Encoding::Packed)).expect("serialising plain data cannot fail")
}

fn raw_file(file: &MaskFile, encoding: Encoding) -> RawFile<'_> {
    let mask = encode_mask(&file.mask, encoding);
    RawFile {
        format: FORMAT_TAG.into(),
        version: u64::from(FORMAT_VERSION),
        n: file.mask.n(),
        labels: file.labels.clone(),
        rows: mask.rows,
        packed: mask.packed,
        provenance: file.provenance.as_ref().map(Cow::Borrowed),
        stack: file.stack.as_ref().map(|(s, mode)| RawStack {
            mode: match mode {
                StackMode::Once => RawMode::Once,
                StackMode::Repeat => RawMode::Repeat,
            },
            layers: s
                .layers()
                .iter()
                .map(|l| RawLayer { heads: l.heads.iter().map(|h| encode_mask(h, encoding)).collect() })
                .collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(input: &str) -> String {
        parse_mask_file(input.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn messages_say_where_and_what() {
        assert_eq!(err(""), "input is empty");
        assert!(err("{\"format\": ").starts_with("malformed JSON at line 1"));
        assert!(err("{\"format\":\"other\",\"version\":1}").contains("\"format\" is \"other\""));
        assert!(err("{\"format\":\"hasseflow-mask\",\"version\":9,\"n\":1,\"rows\":[\"1\"]}").contains("version 9"));
        assert!(err("{\"format\":\"hasseflow-mask\",\"version\":1,\"n\":0,\"rows\":[]}").contains("n = 0"));
        assert!(
            err("{\"format\":\"hasseflow-mask\",\"version\":1,\"n\":2,\"rows\":[\"1.\"]}")
                .contains("expected 2 rows, found 1")
        );
        assert!(
            err("{\"format\":\"hasseflow-mask\",\"version\":1,\"n\":2,\"rows\":[\"1.\",\"1x\"]}")
                .contains("row 1, column 1")
        );
        assert!(
            err("{\"format\":\"hasseflow-mask\",\"version\":1,\"n\":2,\"rows\":[\"1.\",\"11\"],\"extra\":1}")
                .contains("unknown field")
        );
        assert!(err("{\"format\":\"hasseflow-mask\",\"version\":1,\"n\":2}").contains("exactly one of"));
        assert!(err("{\"format\":\"hasseflow-mask\",\"version\":1,\"n\":2,\"packed\":\"!!\"}").contains("base64"));
        assert!(
            err("{\"format\":\"hasseflow-mask\",\"version\":1,\"n\":2,\"rows\":[\"1.\",\"11\"],\"labels\":[\"a\"]}")
                .contains("expected 2 labels")
        );
        assert!(err("11\n1\n").contains("row 1 has 1 columns"));
        assert!(err("111\n111\n").contains("not square"));
        // A text that holds other characters is named by the first, whatever its shape.
        assert!(err("mask_mod = 3\n").contains("row 0, column 0: unexpected character 'm'"));
        assert!(err("11.\n1x\n").contains("row 1, column 1: unexpected character 'x'"));
        assert!(parse_mask_file(&[0xff, 0xfe]).unwrap_err().to_string().contains("UTF-8"));
    }

    #[test]
    fn packed_round_trip_and_tail_check() {
        let m = BitMatrix::from_fn(5, |q, k| (q * 7 + k * 3) % 4 == 0);
        let file = MaskFile::new(m);
        let text = write_json(&file, Encoding::Packed);
        assert!(text.contains("\"packed\""));
        assert_eq!(parse_mask_file(text.as_bytes()).unwrap(), file);
        // 25 bits -> 4 bytes; set a bit past cell 24.
        let tampered = format!(
            "{{\"format\":\"hasseflow-mask\",\"version\":1,\"n\":5,\"packed\":\"{}\"}}",
            BASE64.encode([0, 0, 0, 0x80])
        );
        assert!(err(&tampered).contains("past the last cell"));
    }

    #[test]
    fn grid_accepts_comments_zeros_and_crlf() {
        let f = parse_mask_file(b"# causal\r\n10\r\n11\r\n\r\n").unwrap();
        assert_eq!(f.mask, BitMatrix::from_fn(2, |q, k| k <= q));
    }
}
