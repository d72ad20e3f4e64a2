//! The pictures of one mask a researcher looks at (what the Python package shows in a notebook):
//! the mask grid, `R(l)` shaded by first-reach layer as the app's editor draws it, and the
//! compressed Hasse diagram (chains as one node with their length, as the Models view draws the
//! limit). Up to [`GRID_CELLS`] a side the grids are drawn cell by cell; above, they are
//! heatmaps of shares ([`crate::heat`]), as the Models view draws long contexts.

use hasseflow_core::reach::{CompressedHasse, HasseNodeKind};
use hasseflow_core::{BitMatrix, FirstReach};

use crate::heat::{HeatPicture, heat_svg};
use crate::palette::{Palette, Theme, css};
use crate::plot::{GRID_CELLS, Grid, grid_svg};
use crate::svg::{SvgTheme, to_svg_within};
use crate::{HasseInput, LayoutOptions, layout};

/// Most nodes of a compressed Hasse diagram drawn (the layout's time grows quickly past this,
/// and the picture stops being readable).
pub const MAX_PICTURE_NODES: usize = 120;
/// Largest displayed size of a Hasse picture, in pixels (larger scenes are scaled down whole).
pub const HASSE_MAX_PX: (f64, f64) = (760.0, 560.0);

fn svg_theme(theme: Theme) -> SvgTheme {
    match theme {
        Theme::Light => SvgTheme::light(),
        Theme::Dark => SvgTheme::dark(),
    }
}

/// The mask: cell by cell up to [`GRID_CELLS`] a side, else the share of each block's cells.
///
/// Complexity: `O(n²)`.
pub fn mask_svg(mask: &BitMatrix, title: &str, theme: Theme) -> String {
    let (n, pal) = (mask.n(), Palette::of(theme));
    if n > GRID_CELLS {
        return heat_svg(&HeatPicture::of_cells(n, |q, k| mask.get(q, k)), title, &svg_theme(theme), &pal);
    }
    let colours = [css(pal.empty), css(pal.layer_colour(1, 1))];
    let colours: Vec<&str> = colours.iter().map(String::as_str).collect();
    let grid = Grid { n, colours: &colours, legend: &[(1, "query q (row) reads key k (column)")], title };
    grid_svg(&grid, &svg_theme(theme), |q, k| u8::from(mask.get(q, k)))
}

/// `R(layer)` of `mask`, each cell shaded by the layer that first reaches it (the app's grid:
/// grey diagonal, viridis from layer 1, vermillion for cells new at `layer`); above
/// [`GRID_CELLS`] a side, the share of each block's cells in `R(layer)`.
///
/// Complexity: `O(n²)`.
pub fn first_reach_svg(fr: &FirstReach, mask: &BitMatrix, layer: usize, title: &str, theme: Theme) -> String {
    let (n, pal) = (fr.n(), Palette::of(theme));
    if n > GRID_CELLS {
        let pic = HeatPicture::of_cells(n, |q, k| fr.get(q, k).is_some_and(|d| d <= layer));
        return heat_svg(&pic, title, &svg_theme(theme), &pal);
    }
    let depth = fr.depth().max(1);
    // Classes: 0 empty, 1 in the mask but not reached (layer 0 only), 2 new at `layer`, 3 + d
    // first reached at layer d (d scaled into the 253 classes left when L* is larger).
    let slots = 252usize;
    let slot = |d: usize| if depth <= slots { d } else { d * slots / depth };
    let mut colours = vec![css(pal.empty), css(pal.pending), css(pal.new_cell)];
    for s in 0..=slot(depth) {
        let d = if depth <= slots { s } else { s * depth / slots };
        colours.push(css(pal.layer_colour(d, depth)));
    }
    let colours: Vec<&str> = colours.iter().map(String::as_str).collect();
    let texts: Vec<(u8, String)> = [
        Some((3, "layer 0: the diagonal".to_string())),
        (layer >= 2).then(|| (3 + slot(1) as u8, "first reached at layer 1".to_string())),
        (layer >= 3).then(|| (3 + slot(layer - 1) as u8, format!("first reached at layer {}", layer - 1))),
        (layer >= 1).then(|| (2, format!("new at layer {layer}"))),
        (layer == 0).then(|| (1, "in the mask: reached at layer 1".to_string())),
    ]
    .into_iter()
    .flatten()
    .collect();
    let legend: Vec<(u8, &str)> = texts.iter().map(|(c, t)| (*c, t.as_str())).collect();
    let grid = Grid { n, colours: &colours, legend: &legend, title };
    grid_svg(&grid, &svg_theme(theme), |q, k| match fr.get(q, k) {
        Some(d) if d == layer && layer > 0 => 2,
        Some(d) if d <= layer => 3 + slot(d) as u8,
        _ if mask.get(q, k) => 1,
        _ => 0,
    })
}

/// The caption of a compressed node: `a–b (len)` for a chain, the class's runs (and its size)
/// for a class; with `labels`, positions are shown by their labels.
fn node_text(first: u64, last: u64, size: u64, chain: bool, runs: &str, labels: Option<&[String]>) -> String {
    let name = |p: u64| labels.and_then(|l| l.get(p as usize)).cloned().unwrap_or_else(|| p.to_string());
    match (chain, size) {
        (_, 1) => name(first),
        (true, _) => format!("{}–{} ({size})", name(first), name(last)),
        (false, _) if labels.is_some() => format!("{}…{} ({size})", name(first), name(last)),
        (false, _) => format!("{runs} ({size})"),
    }
}

/// The compressed Hasse diagram as SVG, displayed within [`HASSE_MAX_PX`]; or why it is not
/// drawn: it has one node (a total order or one class: nothing to see beyond the caption), or
/// more than [`MAX_PICTURE_NODES`].
///
/// # Errors
/// The sentence saying why no picture is drawn.
pub fn compressed_hasse_svg(h: &CompressedHasse, labels: Option<&[String]>, theme: Theme) -> Result<String, String> {
    let text = |i: usize| {
        let v = &h.nodes[i];
        node_text(v.first, v.last, v.size, v.kind == HasseNodeKind::Chain, &v.label, labels)
    };
    if h.node_count == 1 && !h.nodes.is_empty() {
        let what = match h.nodes[0].kind {
            HasseNodeKind::Chain => "one chain: a total order",
            HasseNodeKind::Class => "one class: every position reaches every other",
        };
        return Err(format!("The limit's compressed Hasse diagram is a single node, {} ({what}).", text(0)));
    }
    if h.node_count as usize > MAX_PICTURE_NODES || h.truncated {
        return Err(format!(
            "The limit's compressed Hasse diagram has {} nodes and {} edges: too many to draw (at most {MAX_PICTURE_NODES}).",
            h.node_count, h.edge_count
        ));
    }
    let classes: Vec<Vec<usize>> = (0..h.nodes.len()).map(|i| vec![i]).collect();
    let captions: Vec<String> = (0..h.nodes.len()).map(text).collect();
    let edges: Vec<(usize, usize)> = h.edges.iter().map(|e| (e.lower as usize, e.upper as usize)).collect();
    let options = LayoutOptions { max_caption_chars: 24, ..LayoutOptions::default() };
    let scene = layout(&HasseInput { classes: &classes, edges: &edges, labels: Some(&captions) }, &options);
    Ok(to_svg_within(&scene, &svg_theme(theme), HASSE_MAX_PX.0, HASSE_MAX_PX.1))
}

#[cfg(test)]
mod tests {
    use hasseflow_core::Order;
    use hasseflow_core::reach::compress_order;

    use super::*;

    #[test]
    fn the_first_reach_grid_shades_new_cells_and_earlier_layers() {
        // A window of 2 over 6: row q reaches k at layer q - k.
        let mask = BitMatrix::from_fn(6, |q, k| k < q && q - k < 2);
        let fr = FirstReach::new(&mask);
        let pal = Palette::of(Theme::Light);
        let svg = first_reach_svg(&fr, &mask, 2, "R(2)", Theme::Light);
        let new = css(pal.new_cell);
        // Cells (2,0) .. (5,3) are new at layer 2: one run each in rows 2..=5.
        assert_eq!(svg.matches(&format!("fill=\"{new}\"")).count(), 4 + 1, "{svg}");
        assert!(svg.contains("new at layer 2") && svg.contains("first reached at layer 1"));
        let at0 = first_reach_svg(&fr, &mask, 0, "R(0)", Theme::Light);
        assert!(at0.contains("in the mask: reached at layer 1") && !at0.contains(&new));
    }

    #[test]
    fn long_grids_become_heatmaps_of_shares() {
        let mask = BitMatrix::from_fn(600, |q, k| k <= q);
        let svg = mask_svg(&mask, "causal", Theme::Light);
        assert!(svg.contains("share of the cell's keys"));
        let fr = FirstReach::new(&BitMatrix::from_fn(600, |q, k| k < q && q - k < 2));
        let svg = first_reach_svg(&fr, &mask, 3, "R(3)", Theme::Dark);
        assert!(svg.contains("share of the cell's keys"));
    }

    #[test]
    fn a_chain_is_one_node_and_structure_is_drawn_with_lengths() {
        let chain = Order::new(&BitMatrix::from_fn(128, |q, k| k <= q));
        let h = compress_order(chain.classes(), chain.hasse_edges(), 1000);
        let why = compressed_hasse_svg(&h, None, Theme::Light).unwrap_err();
        assert!(why.contains("0–127 (128)") && why.contains("total order"), "{why}");
        // Two causal blocks of 64, the last position reading both: two chains, one edge.
        let two = Order::new(&BitMatrix::from_fn(128, |q, k| k <= q && (q / 64 == k / 64 || q == 127)));
        let h = compress_order(two.classes(), two.hasse_edges(), 1000);
        let svg = compressed_hasse_svg(&h, None, Theme::Light).expect("drawn");
        assert_eq!(svg.matches("<g class=\"node\"").count(), h.nodes.len());
        assert_eq!((h.node_count, h.edge_count), (2, 1));
        assert!(svg.contains("0–63 (64)") && svg.contains("64–127 (64)"), "{svg}");
        let big = Order::new(&BitMatrix::from_fn(600, |q, k| k == q || (k < q && q % 2 == 0 && k % 2 == 1)));
        let h = compress_order(big.classes(), big.hasse_edges(), 1000);
        assert!(compressed_hasse_svg(&h, None, Theme::Light).unwrap_err().contains("too many to draw"));
    }

    #[test]
    fn a_large_scene_is_displayed_within_the_bound() {
        let o = Order::new(&BitMatrix::from_fn(60, |q, k| k == q || (k < q && q % 2 == 0 && k % 2 == 1)));
        let h = compress_order(o.classes(), o.hasse_edges(), 1000);
        let svg = compressed_hasse_svg(&h, None, Theme::Light).expect("drawn");
        let attr = |name: &str| -> f64 {
            let at = svg.find(&format!(" {name}=\"")).map(|i| i + name.len() + 3).unwrap_or(0);
            svg[at..].split('"').next().and_then(|v| v.parse().ok()).unwrap_or(f64::MAX)
        };
        assert!(attr("width") <= HASSE_MAX_PX.0 + 0.5 && attr("height") <= HASSE_MAX_PX.1 + 0.5, "{}", &svg[..200]);
    }
}
