//! Graph algorithms over bit rows: Kuhn's matching (the width) and Tarjan's components (the classes).

use super::*;

/// Kuhn's augmenting path search from left vertex `root`, iterative, over bitset adjacency.
pub(super) fn augment(
    root: usize,
    up: &[u64],
    words: usize,
    visited: &mut [u64],
    match_right: &mut [u32],
    path: &mut Vec<(usize, usize)>,
) -> bool {
    path.clear();
    // Depth-first search; `path` holds the (left, right) pairs of the current alternating path.
    fn next_free(adj: &[u64], visited: &[u64]) -> Option<usize> {
        for (i, (a, v)) in adj.iter().zip(visited).enumerate() {
            let w = a & !v;
            if w != 0 {
                return Some(i * WORD_BITS + w.trailing_zeros() as usize);
            }
        }
        None
    }
    let mut left = root;
    loop {
        let adj = &up[left * words..(left + 1) * words];
        match next_free(adj, visited) {
            Some(b) => {
                set_bit(visited, b);
                if match_right[b] == UNVISITED {
                    // Flip the path.
                    match_right[b] = left as u32;
                    // Walk back: each earlier (left, right) pair of the path takes its right.
                    while let Some((l, r)) = path.pop() {
                        match_right[r] = l as u32;
                    }
                    return true;
                }
                path.push((left, b));
                left = match_right[b] as usize;
            }
            None => match path.pop() {
                Some((l, _)) => left = l,
                None => return false,
            },
        }
    }
}

/// Iterative Tarjan over the "reads" graph `q -> k` (row `q` of `adj`). Returns the component of
/// each vertex and the number of components; component ids are in emission order, which is a
/// topological order of information flow (a class comes after every class it reads).
///
/// Neighbours that are already in a finished component can change nothing, so they are skipped a
/// word at a time (`row & (unvisited | on_stack)`): a causal or block-causal mask costs
/// `O(n²/64 + edges inside classes)` instead of `O(edges)`.
///
/// Complexity: `O(n²/64 + ones(adj))` in the worst case.
pub(crate) fn tarjan(adj: &BitMatrix) -> (Vec<u32>, usize) {
    let n = adj.n();
    let words = words_for(n);
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0u32; n];
    // Bit set for vertices that are unvisited or on the stack: the only neighbours that matter.
    let mut live = vec![!0u64; words];
    let mut stack: Vec<usize> = Vec::new();
    let mut comp = vec![UNVISITED; n];
    let mut comps = 0usize;
    let mut counter = 0u32;
    // Frames: (vertex, word cursor, remaining bits of that word).
    let mut call: Vec<(usize, usize, u64)> = Vec::new();
    for root in 0..n {
        if index[root] != UNVISITED {
            continue;
        }
        index[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root);
        call.push((root, 0, adj.row(root).first().copied().unwrap_or(0)));
        while let Some(frame) = call.last_mut() {
            let v = frame.0;
            // Next relevant neighbour of v, re-masked by `live` since the children may have
            // finished components meanwhile.
            let mut next = None;
            loop {
                frame.2 &= live[frame.1];
                if frame.2 != 0 {
                    let bit = frame.2.trailing_zeros() as usize;
                    frame.2 &= frame.2 - 1;
                    next = Some(frame.1 * WORD_BITS + bit);
                    break;
                }
                frame.1 += 1;
                if frame.1 >= words {
                    break;
                }
                frame.2 = adj.row(v)[frame.1];
            }
            if let Some(w) = next {
                if index[w] == UNVISITED {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    call.push((w, 0, adj.row(w).first().copied().unwrap_or(0)));
                } else {
                    // Live and visited: on the stack.
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(parent, _, _)) = call.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    while let Some(x) = stack.pop() {
                        live[x / WORD_BITS] &= !(1u64 << (x % WORD_BITS));
                        comp[x] = comps as u32;
                        if x == v {
                            break;
                        }
                    }
                    comps += 1;
                }
            }
        }
    }
    (comp, comps)
}

/// [`tarjan`] over adjacency lists: `reads(v)`, the keys `v` reads in ascending order, its own left
/// out (a sparse mask's rows, `analysis::frontier::Graph`). The same components in the same order:
/// both take the neighbours in ascending order, and a neighbour already in a finished component,
/// which [`tarjan`] skips a word at a time, changes nothing here either.
///
/// Complexity: `O(n + edges)`, with no pass over the `n x n` bit rows (0.8 → 0.2 ms for a random
/// mask of 8 keys a row at 4096). Native builds only (`Order::new`).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn tarjan_reads<'a>(n: usize, reads: impl Fn(usize) -> &'a [u32]) -> (Vec<u32>, usize) {
    // `index[v]`: 0 before its visit, its visit's number (from 1) while on the stack, `DONE` once
    // in a component, where a neighbour lowers nothing: a visited neighbour is `min`'d without a
    // branch (whether it was on the stack was a branch mispredicted at random, a fifth off the
    // search of a random mask at 4096).
    const DONE: u32 = u32::MAX;
    let mut index = vec![0u32; n];
    let mut low = vec![0u32; n];
    // Both stacks hold each position at most once: sized once (a random mask's search goes
    // thousands of positions deep, and each doubling copied what it held).
    let mut stack: Vec<u32> = Vec::with_capacity(n);
    let mut comp = vec![0u32; n];
    let mut comps = 0usize;
    let mut counter = 1u32;
    // Frames: (vertex, next neighbour's index in its list).
    let mut call: Vec<(u32, u32)> = Vec::with_capacity(n);
    for root in 0..n {
        if index[root] != 0 {
            continue;
        }
        index[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root as u32);
        call.push((root as u32, 0));
        'frames: while let Some(frame) = call.last_mut() {
            let v = frame.0 as usize;
            // The rest of v's list in one loop: its slice is looked up once per visit of v, not
            // once per key, and low[v] stays in a register.
            let list = reads(v);
            let mut low_v = low[v];
            while let Some(&w) = list.get(frame.1 as usize) {
                frame.1 += 1;
                let w = w as usize;
                let at = index[w];
                if at == 0 {
                    low[v] = low_v;
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w as u32);
                    call.push((w as u32, 0));
                    continue 'frames;
                }
                low_v = low_v.min(at);
            }
            low[v] = low_v;
            call.pop();
            if let Some(&(parent, _)) = call.last() {
                low[parent as usize] = low[parent as usize].min(low_v);
            }
            if low_v == index[v] {
                while let Some(x) = stack.pop() {
                    comp[x as usize] = comps as u32;
                    index[x as usize] = DONE;
                    if x as usize == v {
                        break;
                    }
                }
                comps += 1;
            }
        }
    }
    (comp, comps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// Over lists, the same components in the same order as over bit rows, on random masks from
    /// empty to dense (one big class, many, chains, cycles), sizes across the 64-bit words.
    #[test]
    fn tarjan_over_lists_is_tarjan_over_bit_rows() {
        let mut rng = SplitMix64::new(23);
        let (mut several, mut whole) = (0, 0);
        for case in 0..300 {
            let n = [0, 1, 2, 7, 63, 64, 65, 130, 300][case % 9];
            let p = [0.0, 0.005, 0.02, 0.05, 0.2, 0.6][case % 6];
            let causal = case % 4 == 0;
            let m = BitMatrix::from_fn(n, |q, k| q == k || ((!causal || k < q) && rng.next_f64() < p));
            let (start, list) = {
                let (mut start, mut list) = (vec![0u32], Vec::new());
                for q in 0..n {
                    list.extend(m.row_ones(q).filter(|&k| k != q).map(|k| k as u32));
                    start.push(list.len() as u32);
                }
                (start, list)
            };
            let lists = tarjan_reads(n, |v| &list[start[v] as usize..start[v + 1] as usize]);
            assert_eq!(lists, tarjan(&m), "case {case}: n {n}, p {p}");
            several += usize::from(lists.1 > 1 && lists.1 < n);
            whole += usize::from(n > 1 && lists.1 == 1);
        }
        assert!(several > 25 && whole > 25, "{several} masks of several classes, one of 2+; {whole} of one class");
    }
}
