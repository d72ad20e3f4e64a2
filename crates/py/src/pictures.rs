//! The pictures of a result for the notebook's rich display: the mask grid, `R(l)` by
//! first-reach layer, the heatmap of shares at long lengths, the compressed Hasse diagram. Each
//! is drawn by the render crate (the app's pictures and colours); these functions only turn the
//! Python package's plain data into its inputs.

use hasseflow_core::interop::MaskMod;
use hasseflow_core::reach::{CompressedHasse, compress_order};
use hasseflow_core::{FirstReach, IntervalRows, ReachOptions, ReachStack, StructuredLayer};
use hasseflow_render::palette::Theme;
use hasseflow_render::{HeatPicture, HeatView, compressed_hasse_svg, first_reach_svg, heat_svg, mask_svg};
use pyo3::prelude::*;

use super::{guarded, interval_rows, matrix_from_words};

/// Most layers a structured picture runs (the structured engine's deepest automatic run).
const MAX_PICTURE_LAYERS: usize = hasseflow_core::reach::MAX_AUTO_LAYERS * 16;

fn theme(dark: bool) -> Theme {
    if dark { Theme::Dark } else { Theme::Light }
}

fn check_layers(layers: &[usize], max: usize) -> Result<usize, String> {
    match layers.iter().max() {
        None => Ok(0),
        Some(&l) if l > max => Err(format!("layer = {l} is above {max}")),
        Some(&l) => Ok(l),
    }
}

/// A dense mask (row words): `(the mask grid, R(l) by first-reach layer for each of `layers`,
/// L*)`.
#[pyfunction]
#[pyo3(signature = (words, n, layers, dark=false))]
fn mask_pictures(
    py: Python<'_>,
    words: &[u8],
    n: usize,
    layers: Vec<usize>,
    dark: bool,
) -> PyResult<(String, Vec<String>, usize)> {
    guarded(py, || {
        let mask = matrix_from_words(words, n)?;
        let fr = FirstReach::new(&mask);
        check_layers(&layers, usize::from(u16::MAX))?;
        let grid = mask_svg(&mask, &format!("the mask (n = {n})"), theme(dark));
        let reach = layers
            .iter()
            .map(|&l| {
                let title = format!("R({l}) by first-reach layer (L* = {})", fr.depth());
                first_reach_svg(&fr, &mask, l, &title, theme(dark))
            })
            .collect();
        Ok((grid, reach, fr.depth()))
    })
}

/// A mask as interval rows (see `analyze_rows`), drawn as heatmaps of shares of the queries
/// [`HeatView::queries`] samples: `(the mask, R(l) for each of `layers`)`, each `R(l)` of `l`
/// copies of the mask on the structured engine.
#[pyfunction]
#[pyo3(signature = (n, offsets, spans, layers, dark=false))]
fn rows_pictures(
    py: Python<'_>,
    n: u64,
    offsets: &[u8],
    spans: &[u8],
    layers: Vec<usize>,
    dark: bool,
) -> PyResult<(String, Vec<String>)> {
    guarded(py, || rows_figures(interval_rows(n, offsets, spans)?, &layers, dark))
}

/// [`rows_pictures`] of a mask_mod's source text (the core's mask_mod reader gives its rows), at
/// `n` positions, batch `b`, head `h`.
#[pyfunction]
#[pyo3(signature = (source, n, b, h, layers, dark=false))]
fn source_pictures(
    py: Python<'_>,
    source: &str,
    n: u64,
    b: u64,
    h: u64,
    layers: Vec<usize>,
    dark: bool,
) -> PyResult<(String, Vec<String>)> {
    guarded(py, || {
        let m = MaskMod::parse(source).map_err(|e| format!("mask_mod not imported: {e}"))?;
        rows_figures(m.interval_rows(n, b, h).map_err(|e| e.to_string())?, &layers, dark)
    })
}

fn rows_figures(rows: IntervalRows, layers: &[usize], dark: bool) -> Result<(String, Vec<String>), String> {
    let n = rows.n() as u64;
    let deepest = check_layers(layers, MAX_PICTURE_LAYERS)?;
    let view = HeatView::whole(n);
    let queries = view.queries();
    let (pal, st) = (hasseflow_render::palette::Palette::of(theme(dark)), super::theme(dark));
    let mask_rows: Vec<Vec<[u64; 2]>> = queries.iter().map(|&q| rows.row_u64(q as usize)).collect();
    let pic = HeatPicture::from_rows(&view, mask_rows.iter().map(Vec::as_slice));
    let grid = heat_svg(&pic, &format!("the mask (n = {n}), one query a row"), &st, &pal);
    let mut reach = Vec::new();
    if deepest > 0 {
        let stack = ReachStack::new(n, vec![StructuredLayer::Intervals(rows); deepest], Vec::new())
            .map_err(|e| e.to_string())?;
        let report = stack.run(&ReachOptions { queries, ..ReachOptions::default() }).map_err(|e| e.to_string())?;
        for &l in layers {
            let title = format!("R({l}), one query a row: share of each block's keys reached");
            let rows = report.layers.get(l.wrapping_sub(1)).map_or(&[][..], |x| &x.query_rows[..]);
            let pic = HeatPicture::from_rows(&view, rows.iter().map(|r| r.intervals.as_slice()));
            reach.push(heat_svg(&pic, &title, &st, &pal));
        }
    }
    Ok((grid, reach))
}

/// The queries a heatmap of `n` positions asks rows of (one per display row).
#[pyfunction]
fn heat_queries(n: u64) -> Vec<u64> {
    HeatView::whole(n).queries()
}

/// The heatmap of `rows` (the intervals of `R(l)[q]` of each of [`heat_queries`]`(n)`), titled.
#[pyfunction]
#[pyo3(signature = (n, rows, title, dark=false))]
fn heat_picture(py: Python<'_>, n: u64, rows: Vec<Vec<(u64, u64)>>, title: &str, dark: bool) -> PyResult<String> {
    guarded(py, || {
        let rows: Vec<Vec<[u64; 2]>> = rows.into_iter().map(|r| r.into_iter().map(|(a, b)| [a, b]).collect()).collect();
        let pic = HeatPicture::from_rows(&HeatView::whole(n), rows.iter().map(Vec::as_slice));
        Ok(heat_svg(&pic, title, &super::theme(dark), &hasseflow_render::palette::Palette::of(theme(dark))))
    })
}

/// The compressed Hasse diagram of a dense order (its classes, sorted by smallest member, and
/// covering edges): `(the SVG or None, a sentence about it)`.
#[pyfunction]
#[pyo3(signature = (classes, edges, labels=None, dark=false))]
fn order_picture(
    py: Python<'_>,
    classes: Vec<Vec<usize>>,
    edges: Vec<(usize, usize)>,
    labels: Option<Vec<String>>,
    dark: bool,
) -> PyResult<(Option<String>, String)> {
    guarded(py, move || {
        if let Some(&(a, b)) = edges.iter().find(|&&(a, b)| a >= classes.len() || b >= classes.len()) {
            return Err(format!("edge ({a}, {b}) names a class past {}", classes.len()));
        }
        if classes.iter().any(Vec::is_empty) {
            return Err("classes: an empty class".to_string());
        }
        let h = compress_order(&classes, &edges, hasseflow_render::MAX_PICTURE_NODES + 1);
        Ok(hasse_outcome(&h, labels.as_deref(), dark))
    })
}

/// The compressed Hasse diagram of a structured report (`limit.hasse`, as JSON text).
#[pyfunction]
#[pyo3(signature = (hasse_json, dark=false))]
fn hasse_picture(py: Python<'_>, hasse_json: &str, dark: bool) -> PyResult<(Option<String>, String)> {
    guarded(py, || {
        let h: CompressedHasse = serde_json::from_str(hasse_json).map_err(|e| format!("hasse: {e}"))?;
        Ok(hasse_outcome(&h, None, dark))
    })
}

fn hasse_outcome(h: &CompressedHasse, labels: Option<&[String]>, dark: bool) -> (Option<String>, String) {
    match compressed_hasse_svg(h, labels, theme(dark)) {
        Ok(svg) => (
            Some(svg),
            format!(
                "The limit's compressed Hasse diagram: {} nodes, {} edges; a node a–b (len) is a chain of len positions.",
                h.node_count, h.edge_count
            ),
        ),
        Err(why) => (None, why),
    }
}

/// Adds the picture functions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(mask_pictures, m)?)?;
    m.add_function(wrap_pyfunction!(rows_pictures, m)?)?;
    m.add_function(wrap_pyfunction!(source_pictures, m)?)?;
    m.add_function(wrap_pyfunction!(heat_queries, m)?)?;
    m.add_function(wrap_pyfunction!(heat_picture, m)?)?;
    m.add_function(wrap_pyfunction!(order_picture, m)?)?;
    m.add_function(wrap_pyfunction!(hasse_picture, m)?)?;
    Ok(())
}
