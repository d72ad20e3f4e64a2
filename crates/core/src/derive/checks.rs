//! The checks of a derivation (step 6 of the pipeline in [`super::merge`]): leaks per task and
//! merged, the dense mask's Hasse diagram against the merged edges, the minimality criterion
//! (THEORY §5) and training-inference consistency; and the report's figures.

use std::collections::{BTreeSet, HashMap};

use super::figures::Leak;
use super::keys::{KeyTable, TaskDiagram, isomorphic};
use super::merge::Derivation;
use super::task::{Family, Input, InputId, Token};
use crate::analysis::Analysis;
use crate::bits::BitMatrix;

impl Derivation {
    pub(super) fn finish(&mut self, a_dense: Analysis, table: &mut KeyTable) {
        let family = &self.family;
        let q = self.position_node.len();
        let mut r = std::mem::take(&mut self.report);
        r.positions = q;
        r.entries_dense = self.dense.count_ones();
        r.entries_sparse = self.sparse.count_ones();
        r.density_dense = if q == 0 { 0.0 } else { r.entries_dense as f64 / (q as f64 * q as f64) };
        let labels = self.position_labels();
        r.labelled_positions = labels.iter().filter(|l| !l.is_empty()).count();
        r.multi_label_positions = labels.iter().filter(|l| l.len() > 1).count();
        r.loss_position_share = if q == 0 { 0.0 } else { r.labelled_positions as f64 / q as f64 };
        (r.sample_tokens, r.target_tokens) = sample_and_targets(family);
        r.supervision_density =
            if r.sample_tokens == 0 { 0.0 } else { r.target_tokens as f64 / r.sample_tokens as f64 };
        r.nodes_before =
            self.diagrams.iter().zip(family.tasks()).filter(|(_, t)| !t.padding).map(|(d, _)| d.node_count()).sum();

        // Leaks, per task and merged.
        for (t, (d, task)) in self.diagrams.iter().zip(family.tasks()).enumerate() {
            for (p, label) in task.labels.iter().enumerate() {
                if let Some(l) = *label {
                    r.task_leaks.extend(leaks_of(family, Some(t), p, l, d.analysis.closure(), &task.inputs));
                }
            }
        }
        let inputs = self.position_inputs();
        for (p, ls) in labels.iter().enumerate() {
            for &l in ls {
                r.leaks.extend(leaks_of(family, None, p, l, &self.dense, &inputs));
            }
        }

        // The merged diagram is the dense mask's Hasse diagram.
        let classes = a_dense.classes();
        let mut mask_edges: Vec<(usize, usize)> = a_dense
            .hasse_edges()
            .iter()
            .map(|&(lo, up)| (self.position_node[classes[lo][0]], self.position_node[classes[up][0]]))
            .collect();
        mask_edges.sort_unstable();
        r.diagram_matches = classes.len() == self.nodes.len() && mask_edges == self.edges;

        // Criterion: every node from a task (true by construction: each merged node is the class
        // of a task node; padding-only nodes are counted apart); no two merged nodes equivalent.
        for (c, node) in self.nodes.iter().enumerate() {
            if !node.from_task && !family.tasks()[node.origin.0].padding {
                r.criterion_violations.push(format!("node {c} comes from no task"));
            }
        }
        let groups: Vec<u32> = self.position_node.iter().map(|&c| self.nodes[c].group).collect();
        let merged = TaskDiagram::from_analysis(family, &inputs, &groups, a_dense, table);
        let injective = merged.key_injective();
        let mut by_key: HashMap<u32, Vec<usize>> = HashMap::new();
        for v in 0..merged.node_count() {
            by_key.entry(merged.keys[v]).or_default().push(v);
        }
        let mut dup: Vec<(usize, usize)> = Vec::new();
        for list in by_key.values().filter(|l| l.len() > 1) {
            for (i, &x) in list.iter().enumerate() {
                for &y in &list[i + 1..] {
                    let same = if injective { Some(true) } else { isomorphic(&merged, x, &merged, y) };
                    match same {
                        Some(true) => dup.push((x, y)),
                        Some(false) => {}
                        None => r.undecided += 1,
                    }
                }
            }
        }
        dup.sort_unstable();
        for (x, y) in dup {
            let (nx, ny) = (self.position_node[merged.slots(x)[0]], self.position_node[merged.slots(y)[0]]);
            r.criterion_violations.push(format!(
                "merged nodes {nx} {} and {ny} {} are equivalent",
                self.node_text(nx),
                self.node_text(ny)
            ));
        }
        r.minimal = r.criterion_violations.is_empty();

        // Training-inference consistency: |D(u)| in positions is kept.
        for (t, (d, task)) in self.diagrams.iter().zip(family.tasks()).enumerate() {
            if task.padding {
                continue;
            }
            for v in 0..d.node_count() {
                if d.slots(v).iter().all(|&p| task.labels[p].is_none()) {
                    continue;
                }
                let c = self.node_class[t][v];
                let before = d.analysis.closure().row_count(d.slots(v)[0]);
                let after = self.dense.row_count(self.nodes[c].first);
                if before != after {
                    r.inconsistent.push(format!(
                        "task {t} ({}) node {}: sees {before} positions in its task, {after} in the merged task",
                        task.name,
                        self.node_text(c)
                    ));
                }
            }
        }
        r.consistent = r.inconsistent.is_empty();
        self.report = r;
    }
}

/// `(sample tokens, target tokens)` of a family: the distinct clean tokens its non-padding tasks
/// hold, aggregate or predict, and the distinct tokens they predict (labels are tokens, so the
/// targets are part of the sample).
///
/// Complexity: `O(P log P)` over the tasks' positions `P` (plus the tokens inside aggregated
/// inputs).
fn sample_and_targets(family: &Family) -> (usize, usize) {
    let mut sample: BTreeSet<&Token> = BTreeSet::new();
    let mut targets: BTreeSet<&Token> = BTreeSet::new();
    for task in family.tasks().iter().filter(|t| !t.padding) {
        for &i in &task.inputs {
            match family.input(i) {
                Input::Token(t) => {
                    sample.insert(t);
                }
                Input::Aggregated { from, .. } => sample.extend(from),
                Input::Mask(_) => {}
            }
        }
        for t in task.labels.iter().flatten().filter_map(|&l| family.token_of(l)) {
            sample.insert(t);
            targets.insert(t);
        }
    }
    (sample.len(), targets.len())
}

/// Leaks of labelled position `p` (label `label`) under `closure`.
fn leaks_of(
    family: &Family,
    task: Option<usize>,
    p: usize,
    label: InputId,
    closure: &BitMatrix,
    inputs: &[InputId],
) -> Vec<Leak> {
    let Some(token) = family.token_of(label) else { return Vec::new() };
    closure
        .row_ones(p)
        .filter(|&k| {
            inputs[k] == label
                || matches!(family.input(inputs[k]), Input::Aggregated { .. } if family.input(inputs[k]).carries(token))
        })
        .map(|k| Leak {
            task,
            position: p,
            label: token.to_string(),
            via_position: k,
            via: family.input(inputs[k]).to_string(),
        })
        .collect()
}
