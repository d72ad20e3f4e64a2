//! The fallback layout for large diagrams: longest-path layering (a class sits one layer above
//! its highest lower cover), then barycenter ordering sweeps inside layers, then boxes packed left
//! to right and centred. Edges are straight segments.
//!
//! Complexity: `O(V + E)` for the layering, `O(SWEEPS · (E + V log V))` for the ordering.

use crate::scene::{EdgePath, MARGIN, NODE_H, Scene, SceneEdge, SceneNode, box_width};
use crate::{Engine, HasseInput};

/// Down-then-up sweeps of the barycenter heuristic.
const SWEEPS: usize = 4;
/// Horizontal gap between boxes.
const GAP_X: f64 = 14.0;
/// Vertical distance between layer centres.
const LAYER_H: f64 = 64.0;

/// Longest-path layer of every class (minimal classes at 0) and the adjacency both ways.
fn layering(input: &HasseInput<'_>, v: usize) -> (Vec<usize>, Vec<Vec<usize>>, Vec<Vec<usize>>) {
    let mut ups: Vec<Vec<usize>> = vec![Vec::new(); v];
    let mut downs: Vec<Vec<usize>> = vec![Vec::new(); v];
    for &(lo, up) in input.edges {
        if lo < v && up < v {
            ups[lo].push(up);
            downs[up].push(lo);
        }
    }
    // Kahn's algorithm from the minimal classes; the layer is the longest path from below.
    let mut layer = vec![0usize; v];
    let mut indegree: Vec<usize> = downs.iter().map(Vec::len).collect();
    let mut queue: Vec<usize> = (0..v).filter(|&c| indegree[c] == 0).collect();
    let mut head = 0;
    while head < queue.len() {
        let c = queue[head];
        head += 1;
        for &u in &ups[c] {
            layer[u] = layer[u].max(layer[c] + 1);
            indegree[u] -= 1;
            if indegree[u] == 0 {
                queue.push(u);
            }
        }
    }
    (layer, ups, downs)
}

/// The size of the graph a Sugiyama layout really places: classes plus one dummy node per layer
/// an edge skips (under longest-path layering). layout-rs's time grows steeply with it.
pub fn lowered_size(input: &HasseInput<'_>) -> usize {
    let v = input.classes.len();
    let (layer, _, _) = layering(input, v);
    let dummies: usize = input
        .edges
        .iter()
        .filter(|&&(lo, up)| lo < v && up < v)
        .map(|&(lo, up)| layer[up].saturating_sub(layer[lo] + 1))
        .sum();
    v + dummies
}

pub(crate) fn layout(input: &HasseInput<'_>, captions: &[(String, String)]) -> Scene {
    let v = captions.len();
    let (layer, ups, downs) = layering(input, v);
    let layers = layer.iter().max().map_or(0, |m| m + 1);
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); layers];
    for c in 0..v {
        rows[layer[c]].push(c);
    }
    let mut pos = vec![0f64; v];
    let index_rows = |rows: &Vec<Vec<usize>>, pos: &mut Vec<f64>| {
        for row in rows {
            for (i, &c) in row.iter().enumerate() {
                pos[c] = i as f64;
            }
        }
    };
    index_rows(&rows, &mut pos);
    for sweep in 0..SWEEPS * 2 {
        let upward = sweep % 2 == 0;
        let order: Vec<usize> =
            if upward { (1..layers).collect() } else { (0..layers.saturating_sub(1)).rev().collect() };
        for l in order {
            let neighbours = if upward { &downs } else { &ups };
            let mut keyed: Vec<(f64, usize)> = rows[l]
                .iter()
                .map(|&c| {
                    let ns = &neighbours[c];
                    let key =
                        if ns.is_empty() { pos[c] } else { ns.iter().map(|&n| pos[n]).sum::<f64>() / ns.len() as f64 };
                    (key, c)
                })
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            rows[l] = keyed.into_iter().map(|(_, c)| c).collect();
            for (i, &c) in rows[l].iter().enumerate() {
                pos[c] = i as f64;
            }
        }
    }

    let widths: Vec<f64> = captions.iter().map(|(c, _)| box_width(c)).collect();
    let row_width =
        |row: &Vec<usize>| row.iter().map(|&c| widths[c]).sum::<f64>() + GAP_X * row.len().saturating_sub(1) as f64;
    let max_row = rows.iter().map(row_width).fold(0.0, f64::max);
    let width = max_row + 2.0 * MARGIN;
    let height = layers.saturating_sub(1) as f64 * LAYER_H + NODE_H + 2.0 * MARGIN;
    let mut xy = vec![(0.0, 0.0); v];
    for (l, row) in rows.iter().enumerate() {
        let mut x = MARGIN + (max_row - row_width(row)) / 2.0;
        let y = height - MARGIN - NODE_H / 2.0 - l as f64 * LAYER_H;
        for &c in row {
            xy[c] = (x + widths[c] / 2.0, y);
            x += widths[c] + GAP_X;
        }
    }
    let nodes = (0..v)
        .map(|c| SceneNode {
            class: c,
            x: xy[c].0,
            y: xy[c].1,
            w: widths[c],
            h: NODE_H,
            caption: captions[c].0.clone(),
            full: captions[c].1.clone(),
        })
        .collect();
    let edges = input
        .edges
        .iter()
        .filter(|&&(lo, up)| lo < v && up < v)
        .map(|&(lower, upper)| SceneEdge {
            lower,
            upper,
            path: EdgePath::Line {
                from: (xy[lower].0, xy[lower].1 - NODE_H / 2.0),
                to: (xy[upper].0, xy[upper].1 + NODE_H / 2.0),
            },
        })
        .collect();
    Scene { width, height, nodes, edges, engine: Engine::Layered }
}
