//! The Hasse diagram as Graphviz DOT: one node per class (`c0`, `c1`, ... in the order of
//! [`Analysis::classes`]), one edge `lower -> upper` per covering pair, drawn bottom to top
//! (`rankdir=BT`: minimal classes, the pure sources of information, at the bottom).
//!
//! Node labels list the class's positions as ranges (`0-3, 5`), or its position labels when the
//! file has them (at most [`MAX_LABELS_SHOWN`], then a count). Labels are user data: they are
//! escaped for DOT strings, never interpreted.
//!
//! Complexity: `O(n + edges)`.

use std::fmt::Write as _;

use crate::analysis::Analysis;

/// Position labels shown per node before "… (+k more)".
pub const MAX_LABELS_SHOWN: usize = 6;

/// Escapes text for a double-quoted DOT string.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Sorted positions as ranges: `[0, 1, 2, 5]` → `0-2, 5`.
fn ranges(members: &[usize]) -> String {
    let parts: Vec<String> = crate::analysis::position_runs(members)
        .into_iter()
        .map(|(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") })
        .collect();
    parts.join(", ")
}

/// The Hasse diagram of `analysis` as a DOT digraph, with `labels` (one per position) if given.
///
/// # Examples
/// ```
/// use hasseflow_core::{Analysis, BitMatrix, interop::dot::hasse_dot};
/// let a = Analysis::new(&BitMatrix::from_fn(3, |q, k| k <= q));
/// let dot = hasse_dot(&a, None);
/// assert!(dot.contains("c0 -> c1;") && dot.contains("c1 -> c2;"));
/// assert!(dot.contains("rankdir=BT"));
/// ```
pub fn hasse_dot(analysis: &Analysis, labels: Option<&[String]>) -> String {
    let mut out = String::new();
    let _ =
        writeln!(out, "// Hasse diagram of the limit order (hasseflow): edges lower -> upper, information flows up.");
    let _ = writeln!(out, "digraph hasse {{");
    let _ = writeln!(out, "  rankdir=BT;");
    let _ = writeln!(out, "  node [shape=box, style=rounded, fontname=\"Helvetica\"];");
    for (c, members) in analysis.classes().iter().enumerate() {
        let text = match labels {
            Some(labels) if labels.len() == analysis.n() => {
                let mut shown: Vec<&str> = members.iter().take(MAX_LABELS_SHOWN).map(|&p| labels[p].as_str()).collect();
                let more = members.len().saturating_sub(MAX_LABELS_SHOWN);
                let extra = if more > 0 { format!(" … (+{more} more)") } else { String::new() };
                if shown.is_empty() {
                    shown.push("");
                }
                format!("{}{extra}\n[{}]", shown.join(", "), ranges(members))
            }
            _ => ranges(members),
        };
        let _ = writeln!(out, "  c{c} [label=\"{}\"];", escape(&text));
    }
    for &(lower, upper) in analysis.hasse_edges() {
        let _ = writeln!(out, "  c{lower} -> c{upper};");
    }
    let _ = writeln!(out, "}}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bits::BitMatrix;
    use crate::rng::SplitMix64;

    /// Reads the edges back from the DOT text (export → import of the diagram).
    fn edges_of(dot: &str) -> Vec<(usize, usize)> {
        dot.lines()
            .filter_map(|l| l.trim().strip_suffix(';')?.split_once(" -> "))
            .map(|(a, b)| (a.trim_start_matches('c').parse().unwrap(), b.trim_start_matches('c').parse().unwrap()))
            .collect()
    }

    #[test]
    fn edges_round_trip_on_random_masks() {
        let mut rng = SplitMix64::new(21);
        for _ in 0..100 {
            let n = 1 + rng.below(30);
            let m = BitMatrix::from_fn(n, |_, _| rng.next_f64() < 0.15);
            let a = Analysis::new(&m);
            let dot = hasse_dot(&a, None);
            assert_eq!(edges_of(&dot), a.hasse_edges());
            assert_eq!(dot.matches(" [label=").count(), a.classes().len());
        }
    }

    #[test]
    fn labels_are_escaped_and_shortened() {
        let a = Analysis::new(&BitMatrix::ones(8));
        let labels: Vec<String> = (0..8).map(|i| format!("w\"{i}\\")).collect();
        let dot = hasse_dot(&a, Some(&labels));
        assert!(dot.contains("c0 [label=\"w\\\"0\\\\, "), "{dot}");
        assert!(dot.contains("(+2 more)\\n[0-7]"), "{dot}");
        assert_eq!(ranges(&[0, 1, 2, 5, 7, 8]), "0-2, 5, 7-8");
    }
}
