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

use std::collections::{BTreeSet, HashMap, HashSet};

use serde::Serialize;

use super::task::{Family, Input, InputId, Task, Token};
use crate::analysis::Analysis;
use crate::bits::{BitMatrix, Ones, set_bit, words_for};
use crate::ops::{SparsifyOptions, sparsify_analysis};

/// Steps (candidate trials) allowed to one explicit down-set isomorphism test.
pub const ISO_BUDGET: usize = 200_000;

/// The Hasse diagram of one task, with node inputs and canonical keys. Per-node lists are stored
/// flat (compressed rows), so a task costs a handful of allocations whatever its size.
#[derive(Clone, Debug)]
pub struct TaskDiagram {
    analysis: Analysis,
    /// Positions of every node in slot order, node after node; `start[v]..start[v+1]`.
    slot_flat: Vec<usize>,
    /// Inputs in the same layout as `slot_flat`.
    input_flat: Vec<InputId>,
    start: Vec<usize>,
    /// Hasse parents of every node; `parent_start[v]..parent_start[v+1]`.
    parent_flat: Vec<usize>,
    parent_start: Vec<usize>,
    groups: Vec<u32>,
    rank: Vec<usize>,
    keys: Vec<u32>,
}

/// Compressed rows from `(row, value)` pairs: `(start, values)`.
fn csr(rows: usize, pairs: impl Iterator<Item = (usize, usize)> + Clone) -> (Vec<usize>, Vec<usize>) {
    let mut start = vec![0usize; rows + 1];
    for (r, _) in pairs.clone() {
        start[r + 1] += 1;
    }
    for r in 0..rows {
        start[r + 1] += start[r];
    }
    let mut fill = start.clone();
    let mut flat = vec![0usize; start[rows]];
    for (r, v) in pairs {
        flat[fill[r]] = v;
        fill[r] += 1;
    }
    (start, flat)
}

impl TaskDiagram {
    /// Builds the diagram of a mask whose positions hold `inputs`, with layout `groups`, and
    /// computes the keys of its nodes in `table`.
    fn build(family: &Family, inputs: &[InputId], groups: &[u32], mask: &BitMatrix, table: &mut KeyTable) -> Self {
        Self::from_analysis(family, inputs, groups, Analysis::new(mask), table)
    }

    /// [`Self::build`] for a mask already analysed.
    fn from_analysis(
        family: &Family,
        inputs: &[InputId],
        groups: &[u32],
        analysis: Analysis,
        table: &mut KeyTable,
    ) -> Self {
        let classes = analysis.classes();
        let c = classes.len();
        let mut start = Vec::with_capacity(c + 1);
        let mut slot_flat = Vec::with_capacity(inputs.len());
        for members in classes {
            start.push(slot_flat.len());
            let from = slot_flat.len();
            slot_flat.extend_from_slice(members);
            if members.len() > 1 {
                slot_flat[from..].sort_by(|&a, &b| {
                    let (ia, ib) = (family.input(inputs[a]), family.input(inputs[b]));
                    (ia.pos(), ia, a).cmp(&(ib.pos(), ib, b))
                });
            }
        }
        start.push(slot_flat.len());
        let input_flat: Vec<InputId> = slot_flat.iter().map(|&p| inputs[p]).collect();
        let node_groups: Vec<u32> =
            (0..c).map(|v| slot_flat[start[v]..start[v + 1]].iter().map(|&p| groups[p]).min().unwrap_or(0)).collect();
        let edges = analysis.hasse_edges();
        let (parent_start, parent_flat) = csr(c, edges.iter().map(|&(lo, up)| (up, lo)));
        let (child_start, child_flat) = csr(c, edges.iter().copied());
        // Kahn's algorithm: a bottom-up order of the (acyclic) class diagram.
        let mut missing: Vec<usize> = (0..c).map(|v| parent_start[v + 1] - parent_start[v]).collect();
        let mut order: Vec<usize> = (0..c).filter(|&v| missing[v] == 0).collect();
        let mut i = 0;
        while i < order.len() {
            let v = order[i];
            i += 1;
            for &u in &child_flat[child_start[v]..child_start[v + 1]] {
                missing[u] -= 1;
                if missing[u] == 0 {
                    order.push(u);
                }
            }
        }
        let mut rank = vec![0usize; c];
        for (r, &v) in order.iter().enumerate() {
            rank[v] = r;
        }
        let mut keys = vec![0u32; c];
        for &v in &order {
            let parents = parent_flat[parent_start[v]..parent_start[v + 1]].iter().map(|&p| keys[p]);
            keys[v] = table.intern(&input_flat[start[v]..start[v + 1]], parents);
        }
        TaskDiagram {
            analysis,
            slot_flat,
            input_flat,
            start,
            parent_flat,
            parent_start,
            groups: node_groups,
            rank,
            keys,
        }
    }

    /// The analysis of the task mask (closure, classes, Hasse edges, `L*`).
    pub fn analysis(&self) -> &Analysis {
        &self.analysis
    }

    /// Number of nodes (classes).
    pub fn node_count(&self) -> usize {
        self.keys.len()
    }

    /// Positions of a node in slot order.
    pub fn slots(&self, node: usize) -> &[usize] {
        &self.slot_flat[self.start[node]..self.start[node + 1]]
    }

    /// Input multiset of a node, in slot order.
    pub fn node_inputs(&self, node: usize) -> &[InputId] {
        &self.input_flat[self.start[node]..self.start[node + 1]]
    }

    /// The nodes a node covers (its Hasse parents: information flows from them into it).
    pub fn parents(&self, node: usize) -> &[usize] {
        &self.parent_flat[self.parent_start[node]..self.parent_start[node + 1]]
    }

    /// Hasse edges `(lower, upper)` between node indices.
    pub fn hasse_edges(&self) -> &[(usize, usize)] {
        self.analysis.hasse_edges()
    }

    /// Canonical key id of a node (equal ids: equal input multisets and unravelled down-sets).
    pub fn key(&self, node: usize) -> u32 {
        self.keys[node]
    }

    /// Whether all nodes have pairwise distinct keys (then keys decide equivalence exactly).
    fn key_injective(&self) -> bool {
        let mut seen = HashSet::with_capacity(self.keys.len());
        self.keys.iter().all(|k| seen.insert(*k))
    }

    /// Down-set of `node` (itself included) in bottom-up order.
    fn down_set(&self, node: usize) -> Vec<usize> {
        let mut seen = vec![false; self.node_count()];
        let mut stack = vec![node];
        let mut out = Vec::new();
        seen[node] = true;
        while let Some(v) = stack.pop() {
            out.push(v);
            for &p in self.parents(v) {
                if !seen[p] {
                    seen[p] = true;
                    stack.push(p);
                }
            }
        }
        out.sort_unstable_by_key(|&v| self.rank[v]);
        out
    }
}

/// Interning of canonical keys `(inputs, sorted parent keys)`, shared by all diagrams of a run.
/// A key is stored as one slice `inputs ++ [u32::MAX] ++ sorted parent keys` (neither part holds
/// `u32::MAX`, so the split is unambiguous); a lookup of a known key allocates nothing.
#[derive(Debug, Default)]
struct KeyTable {
    map: HashMap<Box<[u32]>, u32>,
    scratch: Vec<u32>,
}

impl KeyTable {
    fn intern(&mut self, inputs: &[InputId], parent_keys: impl Iterator<Item = u32>) -> u32 {
        self.scratch.clear();
        self.scratch.extend_from_slice(inputs);
        self.scratch.push(u32::MAX);
        let from = self.scratch.len();
        self.scratch.extend(parent_keys);
        self.scratch[from..].sort_unstable();
        if let Some(&k) = self.map.get(&self.scratch[..]) {
            return k;
        }
        let next = self.map.len() as u32;
        self.map.insert(self.scratch.clone().into_boxed_slice(), next);
        next
    }
}

/// Explicit test `D(u) ≅ D(v)` (an order isomorphism of the down-sets preserving inputs, with
/// `u ↦ v`). `None` when the step budget ran out.
///
/// Backtracking in bottom-up order of `D(u)`: a node may only go to an unused node of `D(v)` with
/// the same key whose parents are exactly the images of its parents (equal keys give equal parent
/// counts, so checking inclusion suffices). Every cover of `D(u)` is checked when its upper end is
/// placed and the parent counts match, so a complete assignment is an isomorphism of the Hasse
/// diagrams of the down-sets, hence of the down-sets as orders.
///
/// Complexity: `O(|D|)` per step; exponential in the worst case, cut at [`ISO_BUDGET`] steps.
fn isomorphic(a: &TaskDiagram, u: usize, b: &TaskDiagram, v: usize) -> Option<bool> {
    if a.keys[u] != b.keys[v] {
        return Some(false);
    }
    let du = a.down_set(u);
    let dv = b.down_set(v);
    if du.len() != dv.len() {
        return Some(false);
    }
    let mut buckets: HashMap<u32, Vec<usize>> = HashMap::new();
    for &y in &dv {
        buckets.entry(b.keys[y]).or_default().push(y);
    }
    for &x in &du {
        match buckets.get(&a.keys[x]) {
            Some(_) => {}
            None => return Some(false),
        }
    }
    let m = du.len();
    let mut image = vec![usize::MAX; a.node_count()];
    let mut used = vec![false; b.node_count()];
    let mut next = vec![0usize; m];
    let mut level = 0usize;
    let mut budget = ISO_BUDGET;
    let empty = Vec::new();
    loop {
        if level == m {
            return Some(true);
        }
        let x = du[level];
        let bucket = buckets.get(&a.keys[x]).unwrap_or(&empty);
        let mut placed = false;
        while next[level] < bucket.len() {
            let y = bucket[next[level]];
            next[level] += 1;
            if budget == 0 {
                return None;
            }
            budget -= 1;
            if used[y] || (x == u) != (y == v) {
                continue;
            }
            if a.parents(x).iter().all(|&p| b.parents(y).contains(&image[p])) {
                image[x] = y;
                used[y] = true;
                placed = true;
                break;
            }
        }
        if placed {
            level += 1;
            if level < m {
                next[level] = 0;
            }
        } else {
            if level == 0 {
                return Some(false);
            }
            level -= 1;
            let back = du[level];
            used[image[back]] = false;
            image[back] = usize::MAX;
        }
    }
}

/// A labelled position that sees its own label, directly or inside an aggregated token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Leak {
    /// The task (`None`: the merged task).
    pub task: Option<usize>,
    /// The labelled position.
    pub position: usize,
    /// Its label.
    pub label: String,
    /// The position it sees that carries the label.
    pub via_position: usize,
    /// What that position holds.
    pub via: String,
}

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

/// The figures and checks of a derivation.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DeriveReport {
    /// Family name.
    pub family: String,
    /// Number of tasks (padding tasks excluded).
    pub tasks: usize,
    /// Task nodes before merging (padding tasks excluded).
    pub nodes_before: usize,
    /// Merged nodes that come from some task.
    pub nodes_after: usize,
    /// Merged nodes that only padding tasks have (layout padding).
    pub padding_nodes: usize,
    /// Positions of the merged task.
    pub positions: usize,
    /// Ones of the dense mask.
    pub entries_dense: usize,
    /// Ones of the sparse mask.
    pub entries_sparse: usize,
    /// Dense entries over positions².
    pub density_dense: f64,
    /// Distinct clean tokens of the sample: every token `name_t` that a (non-padding) task holds,
    /// builds an aggregated token from, or predicts, counted once however many positions hold it.
    /// Mask tokens and aggregated tokens are not sample tokens.
    pub sample_tokens: usize,
    /// Distinct sample tokens that some task predicts (the label tokens).
    pub target_tokens: usize,
    /// Supervision density as the paper means it (docs/THEORY.md §5): `target_tokens` over
    /// `sample_tokens`, the share of the sample's tokens that are prediction targets. Butterfly and
    /// Block Two-Stream 1, autoregressive `(n-1)/n`, MAE the share of tokens some span masks.
    pub supervision_density: f64,
    /// Positions of the merged task that carry at least one label.
    pub labelled_positions: usize,
    /// `labelled_positions` over `positions`: the share of positions that carry a loss (a compute
    /// measure: how much of one forward pass is spent on positions that are trained).
    pub loss_position_share: f64,
    /// `L*` of the dense mask.
    pub depth_dense: usize,
    /// `L*` of the sparse mask.
    pub depth_sparse: usize,
    /// Leaks inside the tasks.
    pub task_leaks: Vec<Leak>,
    /// Leaks of the merged task.
    pub leaks: Vec<Leak>,
    /// THEORY §5 criterion: every merged node comes from some task and no two are equivalent.
    pub minimal: bool,
    /// Violations of the criterion, in words.
    pub criterion_violations: Vec<String>,
    /// Every labelled task node keeps exactly its upward dependency in the merged task.
    pub consistent: bool,
    /// Labelled task nodes whose dependency changed, in words.
    pub inconsistent: Vec<String>,
    /// The dense mask's Hasse diagram equals the merged diagram.
    pub diagram_matches: bool,
    /// Merged positions that carry two or more different labels.
    pub multi_label_positions: usize,
    /// Isomorphism tests that ran out of budget (treated as "not equivalent").
    pub undecided: usize,
}

/// The result of the pipeline: per-task diagrams, the merged task, its masks and the report.
#[derive(Clone, Debug)]
pub struct Derivation {
    family: Family,
    diagrams: Vec<TaskDiagram>,
    node_class: Vec<Vec<usize>>,
    nodes: Vec<MergedNode>,
    edges: Vec<(usize, usize)>,
    position_node: Vec<usize>,
    dense: BitMatrix,
    sparse: BitMatrix,
    report: DeriveReport,
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
    order.sort_by_key(|&c| {
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
    fn finish(&mut self, a_dense: Analysis, table: &mut KeyTable) {
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

/// `{a, b}` for a list of inputs.
pub fn multiset_text(family: &Family, inputs: &[InputId]) -> String {
    let parts: Vec<String> = inputs.iter().map(|&i| family.input(i).to_string()).collect();
    format!("{{{}}}", parts.join(", "))
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
