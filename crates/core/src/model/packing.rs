//! Packed sequences on top of any model: document lengths (`--docs 512,1024,...`) and segment-id
//! files (one id per position), both turned into [`Overlays::docs`](crate::pattern::Overlays).
//!
//! Segment ids follow Transformers' `packed_sequence_mask_function`, which lets `q` read `k`
//! exactly when `packed_sequence_mask[q] == packed_sequence_mask[k]`: a document is the set of
//! positions sharing an id. The structured engine describes documents as consecutive runs, so an
//! id that comes back after another id (`0 0 1 1 0`) cannot be represented by lengths and is
//! refused ([`PackingError::NonContiguous`]) rather than silently split into two documents.

use thiserror::Error;

/// Most positions a segment-id file or a document list may describe.
pub const MAX_PACKED_POSITIONS: u64 = 1 << 24;

/// Most bytes of a segment-id file.
pub const MAX_SEGMENT_BYTES: usize = 64 << 20;

/// Why document lengths or segment ids were refused. Each message is one line naming the part.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum PackingError {
    /// An entry of the document list is not a positive integer.
    #[error("docs: entry {index} ({text:?}) is not a positive integer")]
    BadLength {
        /// 0-based entry index.
        index: usize,
        /// The entry as written.
        text: String,
    },
    /// The document list is empty.
    #[error("docs: give at least one document length")]
    Empty,
    /// The lengths do not add up to the context.
    #[error("docs: lengths sum to {sum}, but the context is {n}")]
    WrongSum {
        /// Sum of the lengths (saturating).
        sum: u64,
        /// The context length.
        n: u64,
    },
    /// The segment file is larger than [`MAX_SEGMENT_BYTES`].
    #[error("segments: {bytes} bytes is more than the {max} allowed")]
    TooLarge {
        /// Size of the input.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// The segment file is not a JSON array of integers or whitespace-separated integers.
    #[error("segments: entry {index} ({text:?}) is not a non-negative integer id")]
    BadSegmentId {
        /// 0-based position.
        index: usize,
        /// The entry as written.
        text: String,
    },
    /// The segment file is a malformed JSON array.
    #[error("segments: malformed JSON array: {0}")]
    Json(String),
    /// An id reappears after another document started.
    #[error("segments: id {id} at position {index} reappears after another document (documents must be contiguous)")]
    NonContiguous {
        /// The id.
        id: u64,
        /// 0-based position where it reappears.
        index: usize,
    },
    /// The number of ids differs from the context.
    #[error("segments: {count} ids, but the context is {n}")]
    WrongCount {
        /// Number of ids read.
        count: usize,
        /// The context length.
        n: u64,
    },
}

/// Parses `"512,1024,..."` (commas, optional spaces) into document lengths that must sum to `n`.
pub fn parse_doc_lengths(text: &str, n: u64) -> Result<Vec<u64>, PackingError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(PackingError::Empty);
    }
    let mut docs = Vec::new();
    let mut sum: u64 = 0;
    for (index, part) in trimmed.split(',').enumerate() {
        let part = part.trim();
        let len = match part.parse::<u64>() {
            Ok(v) if v >= 1 => v,
            _ => return Err(PackingError::BadLength { index, text: clip(part) }),
        };
        sum = sum.saturating_add(len);
        docs.push(len);
    }
    if sum != n {
        return Err(PackingError::WrongSum { sum, n });
    }
    Ok(docs)
}

/// Reads a segment-id file (a JSON array of non-negative integers, or integers separated by
/// whitespace) describing `n` positions and returns the document lengths: consecutive equal ids
/// form one document; an id that reappears after another id is refused.
pub fn parse_segment_ids(text: &str, n: u64) -> Result<Vec<u64>, PackingError> {
    if text.len() > MAX_SEGMENT_BYTES {
        return Err(PackingError::TooLarge { bytes: text.len(), max: MAX_SEGMENT_BYTES });
    }
    let ids = read_ids(text)?;
    if ids.len() as u64 != n {
        return Err(PackingError::WrongCount { count: ids.len(), n });
    }
    segments_to_docs(&ids)
}

/// Document lengths of a sequence of segment ids (consecutive equal ids = one document).
pub fn segments_to_docs(ids: &[u64]) -> Result<Vec<u64>, PackingError> {
    let mut docs: Vec<u64> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut prev: Option<u64> = None;
    for (index, &id) in ids.iter().enumerate() {
        if prev == Some(id) {
            if let Some(last) = docs.last_mut() {
                *last += 1;
            }
            continue;
        }
        if !seen.insert(id) {
            return Err(PackingError::NonContiguous { id, index });
        }
        docs.push(1);
        prev = Some(id);
    }
    Ok(docs)
}

fn read_ids(text: &str) -> Result<Vec<u64>, PackingError> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        let values: Vec<serde_json::Value> =
            serde_json::from_str(trimmed).map_err(|e| PackingError::Json(e.to_string()))?;
        if values.len() as u64 > MAX_PACKED_POSITIONS {
            return Err(PackingError::WrongCount { count: values.len(), n: MAX_PACKED_POSITIONS });
        }
        values
            .iter()
            .enumerate()
            .map(|(index, v)| {
                v.as_u64().ok_or_else(|| PackingError::BadSegmentId { index, text: clip(&v.to_string()) })
            })
            .collect()
    } else {
        let mut ids = Vec::new();
        for (index, word) in text.split_whitespace().enumerate() {
            let id = word.parse::<u64>().map_err(|_| PackingError::BadSegmentId { index, text: clip(word) })?;
            ids.push(id);
        }
        Ok(ids)
    }
}

/// At most 40 characters of user text in an error message (documents and image spans).
pub(super) fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_must_sum_to_n() {
        assert_eq!(parse_doc_lengths("2, 3,1", 6), Ok(vec![2, 3, 1]));
        assert_eq!(parse_doc_lengths("2,3", 6), Err(PackingError::WrongSum { sum: 5, n: 6 }));
        assert!(matches!(parse_doc_lengths("2,0,4", 6), Err(PackingError::BadLength { index: 1, .. })));
        assert!(matches!(parse_doc_lengths("2,x", 6), Err(PackingError::BadLength { index: 1, .. })));
        assert_eq!(parse_doc_lengths(" ", 6), Err(PackingError::Empty));
        assert!(matches!(parse_doc_lengths("18446744073709551615,5", 6), Err(PackingError::WrongSum { .. })));
    }

    #[test]
    fn segment_ids_give_runs() {
        assert_eq!(parse_segment_ids("[0,0,1,1,1,7]", 6), Ok(vec![2, 3, 1]));
        assert_eq!(parse_segment_ids("0 0\n1 1 1\t7\n", 6), Ok(vec![2, 3, 1]));
        assert_eq!(parse_segment_ids("0 0 1 1 0 0", 6), Err(PackingError::NonContiguous { id: 0, index: 4 }));
        assert_eq!(parse_segment_ids("[0,0,1]", 6), Err(PackingError::WrongCount { count: 3, n: 6 }));
        assert!(matches!(parse_segment_ids("[0,-1]", 2), Err(PackingError::BadSegmentId { index: 1, .. })));
        assert!(matches!(parse_segment_ids("0 a", 2), Err(PackingError::BadSegmentId { index: 1, .. })));
        assert!(matches!(parse_segment_ids("[0,", 2), Err(PackingError::Json(_))));
    }
}
