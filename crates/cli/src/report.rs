//! The text summary of an analysis (the `--json` object is the core's `report::analysis_json`).

use hasseflow_core::format::MaskFile;
use hasseflow_core::{Analysis, FirstReach};

/// How many items a text line lists before eliding.
const LIST_MAX: usize = 24;
/// Largest n whose limit is printed as a grid.
const GRID_MAX: usize = 64;

fn class_name(a: &Analysis, c: usize) -> String {
    let m = &a.classes()[c];
    if m.len() == 1 {
        m[0].to_string()
    } else if m.len() <= 4 {
        format!("{{{}}}", m.iter().map(usize::to_string).collect::<Vec<_>>().join(","))
    } else {
        format!("{{{}..{} ({})}}", m[0], m[m.len() - 1], m.len())
    }
}

pub(crate) fn elide(items: Vec<String>, total: usize) -> String {
    let shown = items.into_iter().take(LIST_MAX).collect::<Vec<_>>().join(" ");
    if total > LIST_MAX { format!("{shown} ... ({} more)", total - LIST_MAX) } else { shown }
}

/// The human summary.
pub fn analysis_text(file: &MaskFile, a: &Analysis, first_reach: Option<&FirstReach>) -> String {
    let mask = &file.mask;
    let n = a.n();
    let mut out = String::new();
    let mut line = |k: &str, v: String| out.push_str(&format!("{k:<12} {v}\n"));
    line("n", n.to_string());
    line("entries", format!("{} ({:.1}% of n²)", mask.count_ones(), 100.0 * mask.density()));
    line("dense", if a.is_dense() { "yes (M ∨ I is its own closure)".into() } else { "no".into() });
    line("L*", a.depth().to_string());
    let growth: Vec<String> = a.growth().iter().enumerate().map(|(l, c)| format!("L{l}:{c}")).collect();
    line("reached", elide(growth, a.growth().len()));
    let sizes = a.classes().iter().filter(|c| c.len() > 1).count();
    line("classes", format!("{} ({} bidirectional blocks)", a.classes().len(), sizes));
    let names: Vec<String> = (0..a.classes().len()).map(|c| class_name(a, c)).collect();
    line("", elide(names, a.classes().len()));
    line("hasse edges", a.hasse_edges().len().to_string());
    let edges: Vec<String> =
        a.hasse_edges().iter().map(|&(x, y)| format!("{}->{}", class_name(a, x), class_name(a, y))).collect();
    if !edges.is_empty() {
        line("", elide(edges, a.hasse_edges().len()));
    }
    line("height", format!("{} (classes on a longest chain)", a.height()));
    line("width", format!("{} (largest antichain)", a.width()));
    if let Some((stack, mode)) = &file.stack {
        let s = stack.analyze(*mode);
        line(
            "stack",
            format!(
                "{} layers, {:?}: L* = {}, |limit| = {}",
                stack.layers().len(),
                mode,
                s.depth,
                s.limit.count_ones()
            ),
        );
    }
    if n <= GRID_MAX {
        out.push_str("limit R (row q sees column k):\n");
        for row in a.closure().to_row_strings() {
            out.push_str(&format!("  {row}\n"));
        }
        if let Some(d) = first_reach {
            out.push_str("first-reach layer D (. = never, + = 10 or more):\n");
            for q in 0..n {
                let row: String = d
                    .row(q)
                    .map(|x| match x {
                        None => '.',
                        Some(l) if l < 10 => char::from(b'0' + l as u8),
                        Some(_) => '+',
                    })
                    .collect();
                out.push_str(&format!("  {row}\n"));
            }
        }
    }
    out
}

/// The limit's Hasse diagram in words (the structured engine's report), for `model` and `analyze`.
pub(crate) fn hasse_summary(limit: &hasseflow_core::reach::LimitStructure) -> String {
    limit.hasse.as_ref().map_or_else(
        || format!("not computed ({})", limit.method),
        |h| {
            format!(
                "{} nodes, {} edges{}",
                h.node_count,
                h.edge_count,
                if h.truncated { " (list truncated)" } else { "" }
            )
        },
    )
}
