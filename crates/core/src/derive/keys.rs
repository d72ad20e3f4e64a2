//! Canonical keys of task nodes (step 2-3 of the pipeline in [`super::merge`]): each task's Hasse
//! diagram with node inputs in slot order, keys interned in one table shared by all tasks, and the
//! explicit down-set isomorphism test that decides where keys cannot.

use std::collections::{HashMap, HashSet};

use super::task::{Family, InputId};
use crate::analysis::Analysis;
use crate::bits::BitMatrix;

/// Steps (candidate trials) allowed to one explicit down-set isomorphism test.
pub const ISO_BUDGET: usize = 200_000;

/// The Hasse diagram of one task, with node inputs and canonical keys. Per-node lists are stored
/// flat (compressed rows), so a task costs a handful of allocations whatever its size.
#[derive(Clone, Debug)]
pub struct TaskDiagram {
    pub(super) analysis: Analysis,
    /// Positions of every node in slot order, node after node; `start[v]..start[v+1]`.
    slot_flat: Vec<usize>,
    /// Inputs in the same layout as `slot_flat`.
    input_flat: Vec<InputId>,
    start: Vec<usize>,
    /// Hasse parents of every node; `parent_start[v]..parent_start[v+1]`.
    parent_flat: Vec<usize>,
    parent_start: Vec<usize>,
    pub(super) groups: Vec<u32>,
    rank: Vec<usize>,
    pub(super) keys: Vec<u32>,
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
    pub(super) fn build(
        family: &Family,
        inputs: &[InputId],
        groups: &[u32],
        mask: &BitMatrix,
        table: &mut KeyTable,
    ) -> Self {
        Self::from_analysis(family, inputs, groups, Analysis::new(mask), table)
    }

    /// [`Self::build`] for a mask already analysed.
    pub(super) fn from_analysis(
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
                // Keys end with the slot, so they are distinct: unstable gives the same order.
                slot_flat[from..].sort_unstable_by(|&a, &b| {
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
    pub(super) fn key_injective(&self) -> bool {
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
pub(super) struct KeyTable {
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
pub(super) fn isomorphic(a: &TaskDiagram, u: usize, b: &TaskDiagram, v: usize) -> Option<bool> {
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
