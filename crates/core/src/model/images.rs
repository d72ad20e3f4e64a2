//! Image spans on top of any model (`--images 3:256,300:256`), turned into
//! [`Overlays::images`](crate::pattern::Overlays): the positions of each image's tokens, which
//! read each other both ways as Gemma 3's `token_type_ids` make them in Transformers 5.24
//! (`crate::reach` has the rule per layer kind).
//!
//! A span is `START:LEN` (0-based first position, number of tokens). Spans are checked against
//! the context, in one line naming the span: a length of 0, an end past the context, an overlap,
//! and spans that touch (Transformers reads a contiguous run of image tokens as one image, so
//! two touching spans would silently become one; give them as one span).

use thiserror::Error;

use super::packing::clip;

/// Most image spans one run takes.
pub const MAX_IMAGES: usize = 1 << 16;

/// Why image spans were refused. Each message is one line that starts with `images:`.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ImageError {
    /// The list is empty.
    #[error("images: give at least one span START:LEN")]
    Empty,
    /// An entry that is not `START:LEN` with whole numbers.
    #[error("images: entry {index} ({text:?}) is not START:LEN (two whole numbers, e.g. 3:256)")]
    Malformed {
        /// 0-based entry index.
        index: usize,
        /// The entry as written (clipped).
        text: String,
    },
    /// More than [`MAX_IMAGES`] spans.
    #[error("images: {count} spans is more than the {max} allowed")]
    TooMany {
        /// Number of spans.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// A span of length 0.
    #[error("images: span {start}:0 has no tokens (its length must be at least 1)")]
    EmptySpan {
        /// Its first position.
        start: u64,
    },
    /// A span that ends past the context.
    #[error("images: span {start}:{len} ends at {}, past the context {n}", start.saturating_add(*len))]
    OutOfRange {
        /// Its first position.
        start: u64,
        /// Its length.
        len: u64,
        /// The context.
        n: u64,
    },
    /// Two spans sharing positions.
    #[error("images: spans {}:{} and {}:{} overlap", first[0], first[1], second[0], second[1])]
    Overlap {
        /// The earlier span.
        first: [u64; 2],
        /// The later span.
        second: [u64; 2],
    },
    /// Two spans with no position between them.
    #[error(
        "images: spans {}:{} and {}:{} touch, and Transformers reads adjacent image tokens as one image; give them as one span {}:{}",
        first[0], first[1], second[0], second[1], first[0], first[1] + second[1]
    )]
    Touching {
        /// The earlier span.
        first: [u64; 2],
        /// The later span.
        second: [u64; 2],
    },
}

/// Parses `"3:256, 300:256"` (commas, optional spaces) into spans `[start, length]` inside a
/// context of `n` positions, checked by [`check_image_spans`] and sorted by start.
///
/// # Errors
/// An [`ImageError`] naming the entry or span.
///
/// # Examples
/// ```
/// use hasseflow_core::model::parse_image_spans;
/// assert_eq!(parse_image_spans("40:8, 2:16", 64), Ok(vec![[2, 16], [40, 8]]));
/// let e = parse_image_spans("2:16,18:4", 64).unwrap_err();
/// assert!(e.to_string().starts_with("images: spans 2:16 and 18:4 touch"));
/// ```
pub fn parse_image_spans(text: &str, n: u64) -> Result<Vec<[u64; 2]>, ImageError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(ImageError::Empty);
    }
    let mut spans = Vec::new();
    for (index, part) in trimmed.split(',').enumerate() {
        if index >= MAX_IMAGES {
            return Err(ImageError::TooMany { count: trimmed.split(',').count(), max: MAX_IMAGES });
        }
        let part = part.trim();
        let span = part.split_once(':').and_then(|(a, b)| Some([a.trim().parse().ok()?, b.trim().parse().ok()?]));
        match span {
            Some(s) => spans.push(s),
            None => return Err(ImageError::Malformed { index, text: clip(part) }),
        }
    }
    check_image_spans(&spans, n)
}

/// Checks spans `[start, length]` against a context of `n` positions and returns them sorted by
/// start: every length at least 1, every end at most `n`, no two sharing or adjacent positions.
///
/// # Errors
/// An [`ImageError`] naming the span (the first by start).
pub fn check_image_spans(spans: &[[u64; 2]], n: u64) -> Result<Vec<[u64; 2]>, ImageError> {
    if spans.len() > MAX_IMAGES {
        return Err(ImageError::TooMany { count: spans.len(), max: MAX_IMAGES });
    }
    let mut sorted = spans.to_vec();
    sorted.sort_unstable();
    for &[start, len] in &sorted {
        if len == 0 {
            return Err(ImageError::EmptySpan { start });
        }
        if start.checked_add(len).is_none_or(|end| end > n) {
            return Err(ImageError::OutOfRange { start, len, n });
        }
    }
    for pair in sorted.windows(2) {
        let (first, second) = (pair[0], pair[1]);
        let end = first[0] + first[1];
        if second[0] < end {
            return Err(ImageError::Overlap { first, second });
        }
        if second[0] == end {
            return Err(ImageError::Touching { first, second });
        }
    }
    Ok(sorted)
}

/// The spans as typed: `START:LEN,...`.
pub fn image_spans_text(spans: &[[u64; 2]]) -> String {
    spans.iter().map(|[s, l]| format!("{s}:{l}")).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_read_sorted_and_checked() {
        assert_eq!(parse_image_spans(" 10:4 ,0:2", 20), Ok(vec![[0, 2], [10, 4]]));
        assert_eq!(parse_image_spans("", 20), Err(ImageError::Empty));
        assert_eq!(parse_image_spans("0:2,x", 20), Err(ImageError::Malformed { index: 1, text: "x".into() }));
        assert!(matches!(parse_image_spans("3", 20), Err(ImageError::Malformed { index: 0, .. })));
        assert!(matches!(parse_image_spans("3:-1", 20), Err(ImageError::Malformed { index: 0, .. })));
        assert!(matches!(parse_image_spans("3:4:5", 20), Err(ImageError::Malformed { index: 0, .. })));
        assert_eq!(parse_image_spans("3:0", 20), Err(ImageError::EmptySpan { start: 3 }));
        assert_eq!(parse_image_spans("15:6", 20), Err(ImageError::OutOfRange { start: 15, len: 6, n: 20 }));
        assert_eq!(parse_image_spans("15:5", 20), Ok(vec![[15, 5]]));
        let huge = parse_image_spans("18446744073709551615:2", 20).unwrap_err();
        assert_eq!(
            huge.to_string(),
            "images: span 18446744073709551615:2 ends at 18446744073709551615, past the context 20"
        );
        let overlap = parse_image_spans("5:4,2:4", 20).unwrap_err();
        assert_eq!(overlap.to_string(), "images: spans 2:4 and 5:4 overlap");
        let touch = parse_image_spans("2:3,5:4", 20).unwrap_err();
        assert_eq!(
            touch.to_string(),
            "images: spans 2:3 and 5:4 touch, and Transformers reads adjacent image tokens as one image; give them as one span 2:7"
        );
        for e in [overlap, touch, huge] {
            assert!(!e.to_string().contains('\n'));
        }
        assert_eq!(image_spans_text(&[[0, 2], [10, 4]]), "0:2,10:4");
        let many = vec!["0:1"; MAX_IMAGES + 1].join(",");
        assert!(matches!(parse_image_spans(&many, 1 << 20), Err(ImageError::TooMany { .. })));
    }
}
