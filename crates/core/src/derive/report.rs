//! What a derivation reports: the derived task (its figures: [`super::figures`]) as one JSON
//! object ([`Derivation::to_json`], what `hasseflow derive --json` prints and the app exports)
//! and as text ([`Derivation::render_text`]), and its mask as a mask file
//! ([`Derivation::mask_file`]).

use super::figures::{DeriveReport, multiset_text};
use super::merge::Derivation;
use crate::format::{MAX_LABEL_CHARS, MaskFile};

/// A derived mask file's position labels: the positions' input texts, each cut to
/// [`MAX_LABEL_CHARS`] (a long aggregated token ends in `…`).
pub(crate) fn file_labels(positions: &[String]) -> Vec<String> {
    positions
        .iter()
        .map(|l| {
            if l.chars().count() > MAX_LABEL_CHARS {
                l.chars().take(MAX_LABEL_CHARS - 1).chain(['…']).collect()
            } else {
                l.clone()
            }
        })
        .collect()
}

impl Derivation {
    /// The derived task as one JSON object: the report's fields plus `mask` and `sparse_mask`
    /// (row strings), `positions` (the input of each position), `labels` (what each predicts,
    /// `null` if nothing), `n`, `nodes` (merged node texts) and `edges` (the merged diagram).
    /// `hasseflow derive --json` prints it and the app's Designer exports it, so both are one
    /// object (docs/FAMILY_FORMAT.md).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        let mut v = serde_json::to_value(&self.report).unwrap_or_else(|_| json!({}));
        v["mask"] = json!(self.dense.to_row_strings());
        v["sparse_mask"] = json!(self.sparse.to_row_strings());
        v["positions"] = json!(self.position_texts());
        v["labels"] = json!(self.label_texts());
        v["n"] = json!(self.dense.n());
        v["nodes"] = json!((0..self.nodes.len()).map(|c| self.node_text(c)).collect::<Vec<_>>());
        v["edges"] = json!(self.edges);
        v
    }

    /// The dense (or sparse) mask as a mask file whose position labels are the inputs
    /// ([`Self::position_texts`]), each cut to [`MAX_LABEL_CHARS`] (a long aggregated token ends
    /// in `…`). No provenance: [`super::BuiltinFamily::mask_file`] adds the preset a built-in
    /// family reproduces.
    pub fn mask_file(&self, sparse: bool) -> MaskFile {
        let mask = if sparse { &self.sparse } else { &self.dense };
        MaskFile { labels: Some(file_labels(&self.position_texts())), ..MaskFile::new(mask.clone()) }
    }

    /// A human-readable report: the figures, the checks, and for small families each task's
    /// Hasse diagram with the content of its labelled positions.
    pub fn render_text(&self) -> String {
        let r = &self.report;
        let f = &self.family;
        let mut out = String::new();
        let mut line = |k: &str, v: String| out.push_str(&format!("{k:<22} {v}\n"));
        line("family", r.family.clone());
        line("tasks", r.tasks.to_string());
        line("nodes", format!("{} -> {} (+{} padding)", r.nodes_before, r.nodes_after, r.padding_nodes));
        line("positions", r.positions.to_string());
        line(
            "mask entries",
            format!("dense {} ({:.3} density), sparse {}", r.entries_dense, r.density_dense, r.entries_sparse),
        );
        line(
            "supervision density",
            format!(
                "{:.3} ({} of {} sample tokens are targets)",
                r.supervision_density, r.target_tokens, r.sample_tokens
            ),
        );
        line(
            "loss position share",
            format!(
                "{:.3} ({} of {} positions carry a loss)",
                r.loss_position_share, r.labelled_positions, r.positions
            ),
        );
        line("L*", format!("dense {}, sparse {}", r.depth_dense, r.depth_sparse));
        line("leaks", if r.leaks.is_empty() && r.task_leaks.is_empty() { "none".into() } else { leak_summary(r) });
        line(
            "minimal (THEORY §5)",
            if r.minimal { "yes".into() } else { format!("no: {}", r.criterion_violations.join("; ")) },
        );
        line("consistent", if r.consistent { "yes".into() } else { format!("no: {}", r.inconsistent.join("; ")) });
        line("diagram = mask Hasse", if r.diagram_matches { "yes".into() } else { "no".into() });
        if r.multi_label_positions > 0 {
            line("multi-label positions", r.multi_label_positions.to_string());
        }
        if r.undecided > 0 {
            line("undecided iso tests", r.undecided.to_string());
        }
        if self.diagrams.len() <= 12 {
            for (t, (d, task)) in self.diagrams.iter().zip(f.tasks()).enumerate() {
                let pad = if task.padding { " (padding)" } else { "" };
                out.push_str(&format!("task {t} {}{pad}: {} nodes\n", task.name, d.node_count()));
                let nodes: Vec<String> = (0..d.node_count()).map(|v| multiset_text(f, d.node_inputs(v))).collect();
                for &(lo, up) in d.hasse_edges() {
                    out.push_str(&format!("  {} -> {}\n", nodes[lo], nodes[up]));
                }
                for (v, text) in nodes.iter().enumerate() {
                    if d.parents(v).is_empty() && !d.hasse_edges().iter().any(|&(lo, _)| lo == v) {
                        out.push_str(&format!("  {text} (isolated)\n"));
                    }
                }
                for (p, label) in task.labels.iter().enumerate() {
                    if let Some(l) = label {
                        out.push_str(&format!(
                            "  {} predicts {} seeing {}\n",
                            f.input(task.inputs[p]),
                            f.input(*l),
                            multiset_text(f, &self.task_content(t, p))
                        ));
                    }
                }
            }
        }
        if self.nodes.len() <= 64 {
            out.push_str("merged diagram:\n");
            for &(lo, up) in &self.edges {
                out.push_str(&format!("  {} -> {}\n", self.node_text(lo), self.node_text(up)));
            }
        }
        if r.positions <= 64 {
            out.push_str("dense mask (row = query):\n");
            let texts = self.position_texts();
            let labels = self.label_texts();
            for (p, row) in self.dense.to_row_strings().iter().enumerate() {
                let label = labels[p].as_deref().map(|l| format!("  -> {l}")).unwrap_or_default();
                out.push_str(&format!("  {:>16} {row}{label}\n", texts[p]));
            }
        }
        out
    }
}

fn leak_summary(r: &DeriveReport) -> String {
    let all: Vec<String> = r
        .task_leaks
        .iter()
        .chain(&r.leaks)
        .take(5)
        .map(|l| match l.task {
            Some(t) => format!("task {t} position {} ({}) sees {}", l.position, l.label, l.via),
            None => format!("merged position {} ({}) sees {}", l.position, l.label, l.via),
        })
        .collect();
    format!("{} task, {} merged: {}", r.task_leaks.len(), r.leaks.len(), all.join("; "))
}
