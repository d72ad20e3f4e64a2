//! Two more standalone SVG pictures beside the Hasse diagram: a cell grid (a mask, a reach, or
//! where a measurement and the theory differ) and the growth plot `|R(l)| / |limit|` by layer.
//! What the Python package shows in a notebook; plain strings, no web types.

use std::fmt::Write as _;

use crate::svg::{SvgTheme, escape};

/// Largest side drawn cell by cell; a larger grid is drawn in blocks of `ceil(n / GRID_CELLS)`.
pub const GRID_CELLS: usize = 256;

/// A grid picture: `n x n` cells, each of a class `0..colours.len()` (`0` is the background and
/// is not drawn). Above [`GRID_CELLS`] a block shows the highest class of its cells, so a single
/// differing cell is never averaged away. `legend` pairs a class with its meaning.
pub struct Grid<'a> {
    /// Side.
    pub n: usize,
    /// Fill of each class (CSS colours); class 0 is the background.
    pub colours: &'a [&'a str],
    /// `(class, meaning)` for the legend under the grid.
    pub legend: &'a [(u8, &'a str)],
    /// A title above the grid (text, never markup).
    pub title: &'a str,
}

/// Writes the grid: row `q` top to bottom, column `k` left to right, as one SVG document. Runs of
/// equal cells in a row are one rectangle, so a banded mask stays a small file.
///
/// Complexity: `O(n²)` calls of `class`, `O(GRID_CELLS²)` output at most.
pub fn grid_svg(grid: &Grid<'_>, theme: &SvgTheme, class: impl Fn(usize, usize) -> u8) -> String {
    let n = grid.n.max(1);
    let step = n.div_ceil(GRID_CELLS);
    let cells = n.div_ceil(step);
    let px = (512.0 / cells as f64).clamp(1.0, 24.0);
    let side = px * cells as f64;
    let (top, legend_h) = (22.0, 20.0 * grid.legend.len() as f64 + 8.0);
    let (w, h) = (side.max(320.0) + 16.0, top + side + legend_h + 8.0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.1} {h:.1}\" \
         font-family=\"system-ui, sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(s, "<rect width=\"100%\" height=\"100%\" fill=\"{}\"/>", theme.background);
    let _ = writeln!(s, "<text x=\"8\" y=\"15\" fill=\"{}\">{}</text>", theme.ink, escape(grid.title));
    let _ = writeln!(
        s,
        "<rect x=\"8\" y=\"{top}\" width=\"{side:.1}\" height=\"{side:.1}\" fill=\"none\" stroke=\"{}\"/>",
        theme.edge
    );
    let mut row = vec![0u8; cells];
    for bq in 0..cells {
        row.iter_mut().for_each(|c| *c = 0);
        for q in bq * step..((bq + 1) * step).min(n) {
            for (bk, c) in row.iter_mut().enumerate() {
                for k in bk * step..((bk + 1) * step).min(n) {
                    *c = (*c).max(class(q, k));
                }
            }
        }
        let mut k = 0;
        while k < cells {
            let c = row[k];
            let start = k;
            while k < cells && row[k] == c {
                k += 1;
            }
            if let Some(fill) = grid.colours.get(c as usize).filter(|_| c != 0) {
                let _ = writeln!(
                    s,
                    "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{px:.2}\" fill=\"{fill}\"/>",
                    8.0 + start as f64 * px,
                    top + bq as f64 * px,
                    (k - start) as f64 * px
                );
            }
        }
    }
    for (i, (c, meaning)) in grid.legend.iter().enumerate() {
        let x = 8.0;
        let y = top + side + 10.0 + i as f64 * 20.0;
        let fill = grid.colours.get(*c as usize).copied().unwrap_or(theme.background);
        let _ = writeln!(
            s,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"12\" height=\"12\" fill=\"{fill}\" stroke=\"{}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" fill=\"{}\">{}</text>",
            theme.edge,
            x + 18.0,
            y + 11.0,
            theme.ink,
            escape(meaning)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// The growth plot: `|R(l)| / |limit|` against the layer `l = 0..`, a step line with the layer
/// where the limit is reached (`full_at`) marked.
pub fn growth_svg(growth: &[u64], limit: u64, full_at: Option<usize>, theme: &SvgTheme) -> String {
    let (w, h, left, top, bottom) = (420.0, 220.0, 44.0, 24.0, 30.0);
    let (pw, ph) = (w - left - 16.0, h - top - bottom);
    let last = growth.len().saturating_sub(1).max(1) as f64;
    let x = |l: usize| left + pw * l as f64 / last;
    let y = |c: u64| top + ph * (1.0 - c as f64 / limit.max(1) as f64);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" \
         font-family=\"system-ui, sans-serif\" font-size=\"11\">"
    );
    let _ = writeln!(s, "<rect width=\"100%\" height=\"100%\" fill=\"{}\"/>", theme.background);
    let _ = writeln!(s, "<text x=\"8\" y=\"15\" fill=\"{}\">|R(l)| / |limit| by layer</text>", theme.ink);
    for (frac, label) in [(0.0, "0"), (0.5, "50%"), (1.0, "100%")] {
        let yy = top + ph * (1.0 - frac);
        let _ = writeln!(
            s,
            "<line x1=\"{left}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\" stroke=\"{}\" stroke-opacity=\"0.3\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"{}\">{label}</text>",
            left + pw,
            theme.edge,
            left - 4.0,
            yy + 4.0,
            theme.ink
        );
    }
    let mut d = String::new();
    for (l, &c) in growth.iter().enumerate() {
        let _ = write!(d, "{}{:.1} {:.1}", if l == 0 { "M" } else { " L" }, x(l), y(c));
    }
    let _ = writeln!(s, "<path d=\"{d}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>", theme.ink);
    for (l, &c) in growth.iter().enumerate() {
        let _ = writeln!(s, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{}\"/>", x(l), y(c), theme.ink);
    }
    if let Some(f) = full_at.filter(|&f| f < growth.len()) {
        // The label on the side of the marker with room for it.
        let (tx, anchor) = if x(f) > left + pw * 0.7 { (x(f) - 4.0, "end") } else { (x(f) + 4.0, "start") };
        let _ = writeln!(
            s,
            "<line x1=\"{0:.1}\" y1=\"{top}\" x2=\"{0:.1}\" y2=\"{1:.1}\" stroke=\"#d55e00\" stroke-dasharray=\"4 3\"/>\
             <text x=\"{tx:.1}\" y=\"{2:.1}\" text-anchor=\"{anchor}\" fill=\"#d55e00\">L* = {f}</text>",
            x(f),
            top + ph,
            top + ph - 6.0
        );
    }
    let ticks = growth.len().clamp(2, 9);
    for i in 0..ticks {
        let l = (i as f64 * last / (ticks - 1) as f64).round() as usize;
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{}\">{l}</text>",
            x(l),
            top + ph + 14.0,
            theme.ink
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{}\">layer l</text>",
        left + pw / 2.0,
        h - 3.0,
        theme.ink
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grid_draws_runs_and_keeps_a_lone_cell_visible_when_blocked() {
        let g = Grid { n: 4, colours: &["#fff", "#00f"], legend: &[(1, "reads <k>")], title: "causal" };
        let svg = grid_svg(&g, &SvgTheme::light(), |q, k| u8::from(k <= q));
        // Four rows, one run each, plus the frame, the background and the legend swatch.
        assert_eq!(svg.matches("fill=\"#00f\"").count(), 4 + 1);
        assert!(svg.contains("reads &lt;k&gt;"));
        let big = Grid { n: 1000, colours: &["#fff", "#00f", "#f0f"], legend: &[], title: "" };
        let svg = grid_svg(&big, &SvgTheme::light(), |q, k| if (q, k) == (999, 3) { 2 } else { 0 });
        assert_eq!(svg.matches("fill=\"#f0f\"").count(), 1);
    }

    #[test]
    fn the_growth_plot_marks_the_depth() {
        let svg = growth_svg(&[4, 7, 9, 10], 10, Some(3), &SvgTheme::light());
        assert!(svg.contains("L* = 3"));
        assert_eq!(svg.matches("<circle").count(), 4);
        assert!(!growth_svg(&[1], 1, None, &SvgTheme::dark()).contains("L* ="));
    }
}
