//! The derivation pipeline (THEORY §5): per-task Hasse diagrams, node equivalence by canonical
//! keys (with an explicit isomorphism fallback), the minimal merged task and its masks, and the
//! checks (leaks, minimality criterion, training-inference consistency).
//!
//! # Algorithm
//! 1. **Per task**: [`Analysis`] of the task mask gives classes (nodes) and the Hasse diagram.
//!    The positions of a node are put in *slot order*: by input position-id, then input, then
//!    task position. A node's input multiset is its slot-ordered input list.
//! 2. **Keys**, bottom-up in each task: `key(v) = (inputs(v), sorted keys of the nodes v covers)`,
//!    interned to integers in one table shared by all tasks, so equal keys are equal integers.
//!    The key is the unravelling of the down-set `D(v)` into a tree, so it is an isomorphism
//!    invariant: isomorphic down-sets have equal keys.
//! 3. **When keys decide.** If the nodes of `D(u)` have pairwise distinct keys, and so do those of
//!    `D(v)`, then `key(u) = key(v)` implies `D(u) ≅ D(v)`: map each node to the unique node with
//!    its key; covers are preserved because a node's parent keys are part of its key. Keys can
//!    fail to decide only when some down-set holds two distinct nodes with one key, i.e. when
//!    input labels repeat in a way that makes two sub-structures look alike (e.g. `v` covers `a`
//!    and `b`, which cover two different copies of `w_0` in one task and a single shared `w_0` in
//!    another: same key, 5 versus 4 nodes). A task whose keys are all distinct is *key-injective*;
//!    a key carried by any node of a non-injective task is *ambiguous* and its nodes are grouped by
//!    an explicit down-set isomorphism test (backtracking over key-compatible candidates, checking
//!    every cover). The test has a step budget ([`ISO_BUDGET`]); a test that runs out counts as
//!    "not equivalent" (never merge what is not proven equal) and is reported as undecided.
//! 4. **Merge**: one merged node per equivalence class, represented by its first occurrence
//!    (tasks in order, nodes by smallest position). Edges are the images of every task's Hasse
//!    edges. Labels of a merged slot are the union of the labels of that slot in every member.
//! 5. **Layout**: merged nodes sorted by (layout group, smallest position-id, first occurrence);
//!    each node is expanded into one position per input in slot order. The dense mask is
//!    `M*[i][j] = [node(j) ≤ node(i)]`; the sparse one is [`sparsify_analysis`] of it (THEORY §4).
//! 6. **Checks**: the dense mask's own Hasse diagram equals the merged edges; the merged nodes are
//!    pairwise non-equivalent (keys recomputed on the merged diagram, same fallback) and each comes
//!    from a task (THEORY §5 criterion); no labelled position sees its label (leaks, per task and
//!    merged); every labelled task node `u` keeps its upward dependency: `|D(u)|` in positions
//!    equals that of its merged node. (The map `D(u) → D(φ(u))` is onto and preserves inputs, so
//!    equal sizes mean it is a bijection, and a bijective image of a down-set under the
//!    equivalence map is an order isomorphism.)
//!
//! # Complexity
//! With `P` positions over all tasks, `N` task nodes, `E` task Hasse edges, `C` merged nodes and
//! `Q` merged positions: the task analyses (see [`Analysis::new`]), `O(P log P + N + E)` hashing
//! for keys, the leak scan `O(Σ_labelled |content|)`, `O(C²/64 + Q²/64)` for the merged closure and
//! masks plus one [`Analysis`] of each mask. The isomorphism fallback is exponential in the worst
//! case (bounded by [`ISO_BUDGET`] steps per test) and only runs on ambiguous keys.
//!
//! The parts: [`super::keys`] (steps 1-3), this module (4-5 and the [`Derivation`] it returns),
//! [`super::checks`] (6), [`super::report`] (the report, its JSON and text).

use std::collections::{HashMap, HashSet};

use super::figures::{DeriveReport, multiset_text};
use super::keys::{KeyTable, TaskDiagram, isomorphic};
use super::task::{Family, InputId, Task};
use crate::analysis::Analysis;
use crate::bits::{BitMatrix, Ones, set_bit, words_for};
use crate::ops::{SparsifyOptions, sparsify_analysis};

/// One node of the minimal merged task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergedNode {
    /// Input multiset in slot order.
    pub inputs: Vec<InputId>,
    /// Labels of each slot (union over the tasks; usually zero or one).
    pub labels: Vec<Vec<InputId>>,
    /// Layout group.
    pub group: u32,
    /// First occurrence `(task, node)`.
    pub origin: (usize, usize),
    /// Whether some non-padding task has this node.
    pub from_task: bool,
    /// First position of the node in the merged layout (its slots are consecutive).
    pub first: usize,
}

/// The result of the pipeline: per-task diagrams, the merged task, its masks and the report.
#[derive(Clone, Debug)]
pub struct Derivation {
    pub(super) family: Family,
    pub(super) diagrams: Vec<TaskDiagram>,
    pub(super) node_class: Vec<Vec<usize>>,
    pub(super) nodes: Vec<MergedNode>,
    pub(super) edges: Vec<(usize, usize)>,
    pub(super) position_node: Vec<usize>,
    pub(super) dense: BitMatrix,
    pub(super) sparse: BitMatrix,
    pub(super) report: DeriveReport,
}

/// Runs the pipeline on a family: family → per-task Hasse diagrams → node equivalence → minimal
/// merged task → masks and checks. See the module documentation for the algorithm.
///
/// # Errors
/// [`super::FamilyError::Invalid`] when the family has no tasks or the merged task would exceed
/// [`super::MAX_TASK_POSITIONS`] positions.
pub fn derive(family: &Family) -> Result<Derivation, super::FamilyError> {
    let bad = |what: String| super::FamilyError::Invalid { at: format!("family '{}'", family.name), what };
    if family.tasks().iter().all(|t| t.padding) {
        return Err(bad("no (non-padding) tasks".into()));
    }
    let mut table = KeyTable::default();
    let diagrams: Vec<TaskDiagram> =
        family.tasks().iter().map(|t| TaskDiagram::build(family, &t.inputs, &t.groups, &t.mask, &mut table)).collect();

    // Node equivalence.
    let mut ambiguous: HashSet<u32> = HashSet::new();
    for d in &diagrams {
        if !d.key_injective() {
            ambiguous.extend(d.keys.iter().copied());
        }
    }
    let mut classes_of_key: HashMap<u32, Vec<usize>> = HashMap::new();
    let mut origins: Vec<(usize, usize)> = Vec::new();
    let mut undecided = 0usize;
    let mut node_class: Vec<Vec<usize>> = Vec::with_capacity(diagrams.len());
    for (t, d) in diagrams.iter().enumerate() {
        let mut row = Vec::with_capacity(d.node_count());
        for v in 0..d.node_count() {
            let key = d.keys[v];
            let list = classes_of_key.entry(key).or_default();
            let found = if list.is_empty() {
                None
            } else if !ambiguous.contains(&key) {
                Some(list[0])
            } else {
                let mut hit = None;
                for &c in list.iter() {
                    let (rt, rv) = origins[c];
                    match isomorphic(&diagrams[rt], rv, d, v) {
                        Some(true) => {
                            hit = Some(c);
                            break;
                        }
                        Some(false) => {}
                        None => undecided += 1,
                    }
                }
                hit
            };
            let c = found.unwrap_or_else(|| {
                origins.push((t, v));
                list.push(origins.len() - 1);
                origins.len() - 1
            });
            row.push(c);
        }
        node_class.push(row);
    }

    // Merged nodes, laid out.
    let count = origins.len();
    let mut from_task = vec![false; count];
    for (t, row) in node_class.iter().enumerate() {
        if !family.tasks()[t].padding {
            for &c in row {
                from_task[c] = true;
            }
        }
    }
    let mut order: Vec<usize> = (0..count).collect();
    // Keys end with `c`, so they are distinct and an unstable sort gives the same order.
    order.sort_unstable_by_key(|&c| {
        let (t, v) = origins[c];
        let d = &diagrams[t];
        let min_pos = d.node_inputs(v).iter().map(|&i| family.input(i).pos()).min().unwrap_or(0);
        (d.groups[v], min_pos, c)
    });
    let mut renumber = vec![0usize; count];
    for (new, &old) in order.iter().enumerate() {
        renumber[old] = new;
    }
    for row in &mut node_class {
        for c in row.iter_mut() {
            *c = renumber[*c];
        }
    }
    let mut nodes: Vec<MergedNode> = Vec::with_capacity(count);
    let mut position_node = Vec::new();
    for &old in &order {
        let (t, v) = origins[old];
        let d = &diagrams[t];
        nodes.push(MergedNode {
            inputs: d.node_inputs(v).to_vec(),
            labels: vec![Vec::new(); d.node_inputs(v).len()],
            group: d.groups[v],
            origin: (t, v),
            from_task: from_task[old],
            first: position_node.len(),
        });
        position_node.extend(std::iter::repeat_n(nodes.len() - 1, d.node_inputs(v).len()));
    }
    if position_node.len() > super::MAX_TASK_POSITIONS {
        return Err(bad(format!(
            "the merged task has {} positions; the limit is {}",
            position_node.len(),
            super::MAX_TASK_POSITIONS
        )));
    }
    let mut edges: Vec<(usize, usize)> = Vec::new();
    for (t, d) in diagrams.iter().enumerate() {
        let task = &family.tasks()[t];
        for &(lo, up) in d.hasse_edges() {
            edges.push((node_class[t][lo], node_class[t][up]));
        }
        for (v, &c) in node_class[t].iter().enumerate() {
            for (slot, &p) in d.slots(v).iter().enumerate() {
                if let Some(l) = task.labels[p] {
                    nodes[c].labels[slot].push(l);
                }
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    for node in &mut nodes {
        for l in &mut node.labels {
            l.sort_unstable();
            l.dedup();
        }
    }

    // The merged edges form a DAG: an edge joins nodes whose down-sets have strictly increasing
    // height, an isomorphism invariant. Node closure bottom-up, then the position masks.
    let dense = dense_mask(&nodes, &edges, position_node.len());
    let a_dense = Analysis::new(&dense);
    let sparse = sparsify_analysis(&a_dense, SparsifyOptions::default());
    let a_sparse = Analysis::new(&sparse);

    let mut d = Derivation {
        family: family.clone(),
        diagrams,
        node_class,
        nodes,
        edges,
        position_node,
        dense,
        sparse,
        report: DeriveReport {
            family: family.name.clone(),
            tasks: family.tasks().iter().filter(|t| !t.padding).count(),
            nodes_after: from_task.iter().filter(|&&f| f).count(),
            padding_nodes: from_task.iter().filter(|&&f| !f).count(),
            depth_dense: a_dense.depth(),
            depth_sparse: a_sparse.depth(),
            undecided,
            ..DeriveReport::default()
        },
    };
    d.finish(a_dense, &mut table);
    Ok(d)
}

/// `M*[i][j] = [node(j) ≤ node(i)]` for nodes with consecutive slots.
///
/// Complexity: `O(C · (C/64 + edges) + Σ_c Σ_{d ≤ c} (|d|/64 + 1) + Q²/64)`.
fn dense_mask(nodes: &[MergedNode], edges: &[(usize, usize)], positions: usize) -> BitMatrix {
    let c = nodes.len();
    let mut parents = vec![Vec::new(); c];
    let mut children = vec![Vec::new(); c];
    for &(lo, up) in edges {
        parents[up].push(lo);
        children[lo].push(up);
    }
    let mut missing: Vec<usize> = parents.iter().map(Vec::len).collect();
    let mut order: Vec<usize> = (0..c).filter(|&v| missing[v] == 0).collect();
    let mut i = 0;
    while i < order.len() {
        let v = order[i];
        i += 1;
        for &u in &children[v] {
            missing[u] -= 1;
            if missing[u] == 0 {
                order.push(u);
            }
        }
    }
    let cw = words_for(c);
    let mut le = vec![0u64; c * cw];
    // Every node is at least below itself (also a node Kahn could not order, which the height
    // argument rules out but which must not lose its diagonal).
    for v in 0..c {
        set_bit(&mut le[v * cw..(v + 1) * cw], v);
    }
    let mut acc = vec![0u64; cw];
    for &v in &order {
        acc.fill(0);
        set_bit(&mut acc, v);
        for &p in &parents[v] {
            for (d, s) in acc.iter_mut().zip(&le[p * cw..(p + 1) * cw]) {
                *d |= s;
            }
        }
        le[v * cw..(v + 1) * cw].copy_from_slice(&acc);
    }
    let pw = words_for(positions);
    let mut bits = vec![0u64; positions * pw];
    let mut row = vec![0u64; pw];
    for v in 0..c {
        row.fill(0);
        for d in Ones::new(&le[v * cw..(v + 1) * cw]) {
            let start = nodes[d].first;
            for j in start..start + nodes[d].inputs.len() {
                set_bit(&mut row, j);
            }
        }
        let start = nodes[v].first;
        for q in start..start + nodes[v].inputs.len() {
            bits[q * pw..(q + 1) * pw].copy_from_slice(&row);
        }
    }
    BitMatrix::from_words(positions, bits)
}

impl Derivation {
    /// The family.
    pub fn family(&self) -> &Family {
        &self.family
    }

    /// The report.
    pub fn report(&self) -> &DeriveReport {
        &self.report
    }

    /// Per-task diagrams, in task order.
    pub fn diagrams(&self) -> &[TaskDiagram] {
        &self.diagrams
    }

    /// The merged node of each node of each task.
    pub fn node_class(&self) -> &[Vec<usize>] {
        &self.node_class
    }

    /// Merged nodes in layout order.
    pub fn nodes(&self) -> &[MergedNode] {
        &self.nodes
    }

    /// Merged Hasse edges `(lower, upper)` between merged node indices, sorted.
    pub fn edges(&self) -> &[(usize, usize)] {
        &self.edges
    }

    /// Merged node of each position.
    pub fn position_node(&self) -> &[usize] {
        &self.position_node
    }

    /// The dense mask `M*`.
    pub fn dense(&self) -> &BitMatrix {
        &self.dense
    }

    /// The sparse mask (THEORY §4).
    pub fn sparse(&self) -> &BitMatrix {
        &self.sparse
    }

    /// Input of each merged position.
    pub fn position_inputs(&self) -> Vec<InputId> {
        self.nodes.iter().flat_map(|n| n.inputs.iter().copied()).collect()
    }

    /// Labels of each merged position.
    pub fn position_labels(&self) -> Vec<Vec<InputId>> {
        self.nodes.iter().flat_map(|n| n.labels.iter().cloned()).collect()
    }

    /// Text of each merged position's input (the position labels of a mask file).
    pub fn position_texts(&self) -> Vec<String> {
        self.position_inputs().iter().map(|&i| self.family.input(i).to_string()).collect()
    }

    /// Text of each merged position's label (`None`: unlabelled; several labels joined by `|`).
    pub fn label_texts(&self) -> Vec<Option<String>> {
        self.position_labels()
            .iter()
            .map(|ls| {
                (!ls.is_empty())
                    .then(|| ls.iter().map(|&l| self.family.input(l).to_string()).collect::<Vec<_>>().join("|"))
            })
            .collect()
    }

    /// Content of a merged position: the inputs it sees in the limit, sorted.
    pub fn content(&self, position: usize) -> Vec<InputId> {
        let inputs = self.position_inputs();
        let mut out: Vec<InputId> = self.dense.row_ones(position).map(|k| inputs[k]).collect();
        out.sort_unstable();
        out
    }

    /// Content of a position of task `task`: the inputs it sees in the limit, sorted.
    ///
    /// # Panics
    /// If `task` or `position` is out of range.
    pub fn task_content(&self, task: usize, position: usize) -> Vec<InputId> {
        let t = &self.family.tasks()[task];
        let mut out: Vec<InputId> =
            self.diagrams[task].analysis.closure().row_ones(position).map(|k| t.inputs[k]).collect();
        out.sort_unstable();
        out
    }

    /// `{a, b, ...}`: a merged node's input multiset.
    pub fn node_text(&self, node: usize) -> String {
        multiset_text(&self.family, &self.nodes[node].inputs)
    }

    /// The merged task as a [`Task`] (labels: the first label of each position), e.g. to derive
    /// again (merging is idempotent).
    pub fn to_task(&self, name: impl Into<String>) -> Task {
        let labels = self.position_labels();
        Task {
            name: name.into(),
            inputs: self.position_inputs(),
            labels: labels.iter().map(|l| l.first().copied()).collect(),
            groups: self.position_node.iter().map(|&c| self.nodes[c].group).collect(),
            mask: self.dense.clone(),
            padding: false,
        }
    }
}
