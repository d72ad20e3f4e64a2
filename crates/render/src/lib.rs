//! hasseflow-render: lays out a Hasse diagram and records it as a drawable [`Scene`] of plain
//! types (nodes, edges, coordinates), which a UI draws as interactive elements and [`to_svg`]
//! writes as a standalone SVG document.
//!
//! Two layout engines: [`Engine::LayoutRs`] (the `layout-rs` crate, Sugiyama-style, curved
//! edges) and [`Engine::Layered`] (longest-path layering plus barycenter ordering, straight
//! edges, near-linear time). [`Engine::Auto`] picks the layered one when the graph layout-rs
//! would place ([`lowered_size`]: classes plus a dummy node per skipped layer of each edge) is
//! above [`LayoutOptions::layout_rs_limit`], because layout-rs's time grows steeply with it (about
//! 30 ms at 60 classes with long edges, over a second at 120, half a minute at 250; see
//! `examples/layout_time.rs`).
//!
//! No clock, IO or web types here: callers measure time themselves.

mod heat;
mod layered;
pub mod palette;
mod picture;
mod plot;
mod scene;
mod svg;

pub use heat::{HEAT_CELLS, HeatPicture, HeatView, heat_colour, heat_svg};
pub use layered::lowered_size;
pub use picture::{HASSE_MAX_PX, MAX_PICTURE_NODES, compressed_hasse_svg, first_reach_svg, mask_svg};
pub use plot::{GRID_CELLS, Grid, grid_svg, growth_svg};
pub use scene::{EdgePath, Scene, SceneEdge, SceneNode, node_caption};
pub use svg::{SvgTheme, to_svg, to_svg_within};

use hasseflow_core::Analysis;

/// Which layout engine to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Engine {
    /// layout-rs up to [`LayoutOptions::layout_rs_limit`] nodes, the layered layout above.
    #[default]
    Auto,
    /// Always layout-rs.
    LayoutRs,
    /// Always the simple layered layout.
    Layered,
}

/// Layout configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayoutOptions {
    /// Engine choice.
    pub engine: Engine,
    /// Largest [`lowered_size`] (classes plus dummy nodes for long edges) that [`Engine::Auto`]
    /// gives to layout-rs.
    pub layout_rs_limit: usize,
    /// Longest node caption in characters before it is shortened (the full text stays in
    /// [`SceneNode::full`]).
    pub max_caption_chars: usize,
}

impl Default for LayoutOptions {
    fn default() -> Self {
        LayoutOptions { engine: Engine::Auto, layout_rs_limit: 160, max_caption_chars: 18 }
    }
}

/// What a layout is made of: the classes (each a list of positions), the covering pairs
/// `(lower, upper)`, and optional position labels.
#[derive(Clone, Copy, Debug)]
pub struct HasseInput<'a> {
    /// Classes of positions, indexed as in the edges.
    pub classes: &'a [Vec<usize>],
    /// Covering pairs `(lower, upper)`.
    pub edges: &'a [(usize, usize)],
    /// Optional label per position (shown as text, never markup).
    pub labels: Option<&'a [String]>,
}

impl<'a> HasseInput<'a> {
    /// The Hasse diagram of an analysis.
    pub fn from_analysis(a: &'a Analysis, labels: Option<&'a [String]>) -> Self {
        HasseInput { classes: a.classes(), edges: a.hasse_edges(), labels }
    }
}

/// Lays out a Hasse diagram with minimal classes at the bottom and edges pointing up.
///
/// Complexity: layout-rs is super-linear (its placement dominates: tens of milliseconds at 100
/// nodes, seconds at 500); the layered engine is `O(sweeps · (V + E) log V)` after layering.
///
/// # Examples
/// ```
/// use hasseflow_core::{Analysis, BitMatrix};
/// use hasseflow_render::{layout, HasseInput, LayoutOptions};
/// let a = Analysis::new(&BitMatrix::from_fn(4, |q, k| k <= q));
/// let scene = layout(&HasseInput::from_analysis(&a, None), &LayoutOptions::default());
/// assert_eq!(scene.nodes.len(), 4);
/// assert_eq!(scene.edges.len(), 3);
/// // class 0 (position 0, the source) is drawn below class 3.
/// assert!(scene.nodes[0].y > scene.nodes[3].y);
/// ```
#[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
pub fn layout(input: &HasseInput<'_>, options: &LayoutOptions) -> Scene {
    let use_layout_rs = match options.engine {
        Engine::Auto => lowered_size(input) <= options.layout_rs_limit,
        Engine::LayoutRs => true,
        Engine::Layered => false,
    };
    let captions: Vec<(String, String)> =
        input.classes.iter().map(|c| node_caption(c, input.labels, options.max_caption_chars)).collect();
    if use_layout_rs { scene::layout_rs(input, &captions) } else { layered::layout(input, &captions) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hasseflow_core::BitMatrix;

    fn scene_of(m: &BitMatrix, engine: Engine) -> Scene {
        let a = Analysis::new(m);
        layout(&HasseInput::from_analysis(&a, None), &LayoutOptions { engine, ..LayoutOptions::default() })
    }

    #[test]
    fn both_engines_put_lower_classes_below_upper_ones() {
        let masks = [
            BitMatrix::from_fn(6, |q, k| k <= q),
            BitMatrix::from_fn(6, |q, k| k / 2 <= q / 2),
            BitMatrix::from_fn(5, |q, k| k <= q || k < 2),
            BitMatrix::zeros(3),
            BitMatrix::ones(3),
        ];
        for m in &masks {
            for engine in [Engine::LayoutRs, Engine::Layered] {
                let s = scene_of(m, engine);
                let a = Analysis::new(m);
                assert_eq!(s.nodes.len(), a.classes().len());
                assert_eq!(s.edges.len(), a.hasse_edges().len());
                for e in &s.edges {
                    let (lo, up) = (&s.nodes[e.lower], &s.nodes[e.upper]);
                    assert!(lo.y > up.y, "{engine:?}: edge {}->{} must point up", e.lower, e.upper);
                }
                for n in &s.nodes {
                    assert!(n.x - n.w / 2.0 >= -0.5 && n.x + n.w / 2.0 <= s.width + 0.5, "{engine:?} node inside");
                    assert!(n.y - n.h / 2.0 >= -0.5 && n.y + n.h / 2.0 <= s.height + 0.5, "{engine:?} node inside");
                }
            }
        }
    }

    #[test]
    fn auto_layout_survives_random_masks() {
        // Random masks of many shapes (cycles, antichains, long edges): no panic, every class
        // and cover drawn, covers pointing up.
        let mut rng = hasseflow_core::rng::SplitMix64::new(7);
        for case in 0..120 {
            let n = 1 + (rng.next_u64() % 40) as usize;
            let p = (rng.next_u64() % 100) as f64 / 400.0;
            let causal = case % 3 != 0;
            let m =
                BitMatrix::from_fn(n, |q, k| (!causal || k <= q) && ((rng.next_u64() % 10_000) as f64) < p * 10_000.0);
            let a = Analysis::new(&m);
            let s = layout(&HasseInput::from_analysis(&a, None), &LayoutOptions::default());
            assert_eq!(s.nodes.len(), a.classes().len(), "case {case}");
            assert_eq!(s.edges.len(), a.hasse_edges().len(), "case {case}");
            for e in &s.edges {
                assert!(s.nodes[e.lower].y > s.nodes[e.upper].y, "case {case}: {}->{} points up", e.lower, e.upper);
            }
        }
    }

    #[test]
    fn layered_layout_handles_five_hundred_classes() {
        // A window mask has a chain of 500 singleton classes; a random-ish DAG exercises crossings.
        let m = BitMatrix::from_fn(500, |q, k| k <= q && (q - k < 2 || (q * 31 + k * 17) % 97 == 0));
        let s = scene_of(&m, Engine::Auto);
        assert_eq!(s.engine, Engine::Layered);
        assert_eq!(s.nodes.len(), 500);
        // Layers are distinct rows: no two nodes overlap.
        let mut boxes: Vec<(i64, i64)> = s.nodes.iter().map(|n| (n.x.round() as i64, n.y.round() as i64)).collect();
        boxes.sort_unstable();
        boxes.dedup();
        assert_eq!(boxes.len(), 500);
    }

    #[test]
    fn svg_escapes_labels_and_is_well_formed() {
        let m = BitMatrix::from_fn(2, |q, k| k <= q);
        let a = Analysis::new(&m);
        let labels = vec!["<img src=x onerror=alert(1)>".to_string(), "a & \"b\"".to_string()];
        let s = layout(&HasseInput::from_analysis(&a, Some(&labels)), &LayoutOptions::default());
        let svg = to_svg(&s, &SvgTheme::light());
        assert!(svg.starts_with("<svg"));
        assert!(!svg.contains("<img"));
        assert!(svg.contains("&lt;img src=x onerror=alert(1)&gt;"));
        assert!(svg.contains("a &amp; &quot;b&quot;"));
        assert_eq!(svg.matches("<g class=\"node\"").count(), 2);
    }
}
