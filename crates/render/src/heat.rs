//! The heatmap of `R(l)` at real lengths, as the app's Models view draws it: display rows are
//! queries (one per row of a [`HeatView`], or every query of the row's block for a dense
//! picture) and each display cell is shaded by the share of its keys inside the row. The store
//! computes a [`HeatPicture`] for the canvas; [`heat_svg`] writes one as a standalone SVG.

use std::fmt::Write as _;

use crate::palette::{Palette, css, viridis};
use crate::svg::{SvgTheme, escape};

/// Most display rows (and columns) of the heatmap: the engine is asked for this many rows.
pub const HEAT_CELLS: usize = 256;

/// The visible part of the heatmap: queries `q0..=q1` (rows) and keys `k0..=k1` (columns).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HeatView {
    /// First query.
    pub q0: u64,
    /// Last query.
    pub q1: u64,
    /// First key.
    pub k0: u64,
    /// Last key.
    pub k1: u64,
}

impl HeatView {
    /// Everything of `n` positions.
    pub fn whole(n: u64) -> HeatView {
        let last = n.saturating_sub(1);
        HeatView { q0: 0, q1: last, k0: 0, k1: last }
    }

    /// Whether the view shows every position.
    pub fn is_whole(&self, n: u64) -> bool {
        *self == HeatView::whole(n)
    }

    /// The view zoomed by `factor` (above 1: closer) about the point at fractions `(fq, fk)` of
    /// the visible range (0: first, 1: last), which stays where it is; clamped to `0..n`, at
    /// least one position wide, at most the whole.
    pub fn zoomed(&self, factor: f64, fq: f64, fk: f64, n: u64) -> HeatView {
        let axis = |a: u64, b: u64, f: f64| -> (u64, u64) {
            let width = (b - a + 1) as f64;
            let new_w = (width / factor).round().clamp(1.0, n as f64);
            let at = a as f64 + f.clamp(0.0, 1.0) * width;
            let lo = (at - f.clamp(0.0, 1.0) * new_w).round().clamp(0.0, n as f64 - new_w);
            (lo as u64, lo as u64 + new_w as u64 - 1)
        };
        let (q0, q1) = axis(self.q0, self.q1, fq);
        let (k0, k1) = axis(self.k0, self.k1, fk);
        HeatView { q0, q1, k0, k1 }
    }

    /// Number of display rows: one per query when the range is small, else [`HEAT_CELLS`].
    pub fn rows(&self) -> usize {
        ((self.q1 - self.q0 + 1) as usize).min(HEAT_CELLS)
    }

    /// Number of display columns.
    pub fn cols(&self) -> usize {
        ((self.k1 - self.k0 + 1) as usize).min(HEAT_CELLS)
    }

    /// The query shown in each display row: the middle of the row's share of `q0..=q1`.
    pub fn queries(&self) -> Vec<u64> {
        let (h, rows) = (self.q1 - self.q0 + 1, self.rows() as u64);
        (0..rows).map(|r| self.q0 + (2 * r * h + h) / (2 * rows)).collect()
    }

    /// The keys of display column `c`: `start..end` (end exclusive).
    pub fn col_keys(&self, c: usize) -> (u64, u64) {
        let (w, cols) = (self.k1 - self.k0 + 1, self.cols() as u64);
        let at = |c: u64| self.k0 + c * w / cols;
        (at(c as u64), at(c as u64 + 1))
    }
}

/// One layer of the heatmap, ready to paint: the covered fraction of each display cell.
#[derive(Clone, Debug, PartialEq)]
pub struct HeatPicture {
    /// Display rows.
    pub rows: usize,
    /// Display columns.
    pub cols: usize,
    /// Row-major covered fractions in `[0, 1]`: the share of the cell's keys in `R(l)[q]`.
    pub fraction: Vec<f32>,
}

impl HeatPicture {
    /// The shares of `rows` (one per display row of `view`: the sorted, disjoint, inclusive
    /// intervals of `R(l)[q]` of its query, [`HeatView::queries`]) in each display column's keys.
    ///
    /// Complexity: `O(rows · (cols + intervals))`.
    pub fn from_rows<'a>(view: &HeatView, rows: impl Iterator<Item = &'a [[u64; 2]]>) -> HeatPicture {
        let (nrows, cols) = (view.rows(), view.cols());
        let mut fraction = vec![0f32; nrows * cols];
        for (r, row) in rows.take(nrows).enumerate() {
            let mut i = 0;
            for c in 0..cols {
                let (a, b) = view.col_keys(c);
                let mut covered = 0u64;
                // Intervals are sorted: skip those ending before the column, count the overlaps.
                while i < row.len() && row[i][1] < a {
                    i += 1;
                }
                let mut j = i;
                while j < row.len() && row[j][0] < b {
                    let [lo, hi] = row[j];
                    covered += (hi + 1).min(b).saturating_sub(lo.max(a));
                    j += 1;
                }
                fraction[r * cols + c] = (covered as f64 / (b - a).max(1) as f64) as f32;
            }
        }
        HeatPicture { rows: nrows, cols, fraction }
    }

    /// The share of the cells `(q, k)` with `cell(q, k)` in each block of an `n x n` grid cut into
    /// at most [`HEAT_CELLS`] blocks a side (every cell counted, not one query a row).
    ///
    /// Complexity: `O(n²)` calls of `cell`.
    pub fn of_cells(n: usize, cell: impl Fn(usize, usize) -> bool) -> HeatPicture {
        let view = HeatView::whole(n as u64);
        let (rows, cols) = (view.rows(), view.cols());
        let mut fraction = vec![0f32; rows * cols];
        let edge = |i: usize| ((i as u64 * n as u64) / rows as u64) as usize;
        for r in 0..rows {
            let mut count = vec![0u64; cols];
            for q in edge(r)..edge(r + 1) {
                for (c, slot) in count.iter_mut().enumerate() {
                    let (a, b) = view.col_keys(c);
                    *slot += (a as usize..b as usize).filter(|&k| cell(q, k)).count() as u64;
                }
            }
            for (c, &hit) in count.iter().enumerate() {
                let (a, b) = view.col_keys(c);
                let cells = ((edge(r + 1) - edge(r)) as u64 * (b - a)).max(1);
                fraction[r * cols + c] = (hit as f64 / cells as f64) as f32;
            }
        }
        HeatPicture { rows, cols, fraction }
    }
}

/// Colour of a covered share: the empty colour at 0, viridis from its dark end up (the Models
/// view's heatmap).
pub fn heat_colour(f: f32, pal: &Palette) -> (u8, u8, u8) {
    if f <= 0.0 { pal.empty } else { viridis(0.15 + 0.85 * f64::from(f)) }
}

/// Writes `pic` as a standalone SVG of about 512 px a side, titled `title`, with the share scale
/// under it. Shares are drawn in steps of 1/32, and runs of equal steps in a row are one
/// rectangle, so a banded picture stays a small file.
///
/// Complexity: `O(rows · cols)`.
pub fn heat_svg(pic: &HeatPicture, title: &str, theme: &SvgTheme, pal: &Palette) -> String {
    let (rows, cols) = (pic.rows.max(1), pic.cols.max(1));
    let px = (512.0 / rows.max(cols) as f64).clamp(1.0, 24.0);
    let (gw, gh) = (px * cols as f64, px * rows as f64);
    let top = 22.0;
    let (w, h) = (gw.max(320.0) + 16.0, top + gh + 40.0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.1} {h:.1}\" \
         font-family=\"system-ui, sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(s, "<rect width=\"100%\" height=\"100%\" fill=\"{}\"/>", theme.background);
    let _ = writeln!(s, "<text x=\"8\" y=\"15\" fill=\"{}\">{}</text>", theme.ink, escape(title));
    let _ = writeln!(s, "<rect x=\"8\" y=\"{top}\" width=\"{gw:.1}\" height=\"{gh:.1}\" fill=\"{}\"/>", css(pal.empty));
    let step = |f: f32| (f.clamp(0.0, 1.0) * 32.0).ceil() as u8;
    for r in 0..pic.rows {
        let row = &pic.fraction[r * pic.cols..(r + 1) * pic.cols];
        let mut c = 0;
        while c < pic.cols {
            let v = step(row[c]);
            let start = c;
            while c < pic.cols && step(row[c]) == v {
                c += 1;
            }
            if v > 0 {
                let _ = writeln!(
                    s,
                    "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{px:.2}\" fill=\"{}\"/>",
                    8.0 + start as f64 * px,
                    top + r as f64 * px,
                    (c - start) as f64 * px,
                    css(heat_colour(f32::from(v) / 32.0, pal))
                );
            }
        }
    }
    let _ = writeln!(
        s,
        "<rect x=\"8\" y=\"{top}\" width=\"{gw:.1}\" height=\"{gh:.1}\" fill=\"none\" stroke=\"{}\"/>",
        theme.edge
    );
    // The scale: 0 (empty) then shares up to 100%.
    let y = top + gh + 10.0;
    for i in 0..=10 {
        let f = i as f32 / 10.0;
        let _ = writeln!(
            s,
            "<rect x=\"{:.1}\" y=\"{y:.1}\" width=\"14\" height=\"12\" fill=\"{}\" stroke=\"{}\" stroke-width=\"0.5\"/>",
            8.0 + 14.0 * i as f64,
            css(heat_colour(f, pal)),
            theme.edge
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{}\">share of the cell's keys reached: 0 … 100%</text>",
        8.0 + 14.0 * 11.0 + 6.0,
        y + 10.0,
        theme.ink
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::palette::Theme;

    #[test]
    fn shares_of_rows_count_the_overlap_of_each_column() {
        // 512 positions in 256 columns of 2 keys: [0, 2] covers column 0 and half of column 1.
        let view = HeatView::whole(512);
        let rows: Vec<Vec<[u64; 2]>> = vec![vec![[0, 2]], vec![[5, 5], [8, 11]]];
        let pic = HeatPicture::from_rows(&view, rows.iter().map(Vec::as_slice));
        assert_eq!((pic.rows, pic.cols), (256, 256));
        assert_eq!(&pic.fraction[..3], &[1.0, 0.5, 0.0]);
        assert_eq!(&pic.fraction[256..262], &[0.0, 0.0, 0.5, 0.0, 1.0, 1.0]);
    }

    #[test]
    fn shares_of_cells_count_every_cell_of_the_block() {
        // Causal at 512: a diagonal block of 2 x 2 holds 3 of its 4 cells.
        let pic = HeatPicture::of_cells(512, |q, k| k <= q);
        assert_eq!(pic.fraction[0], 0.75);
        assert_eq!(pic.fraction[256], 1.0);
        assert_eq!(pic.fraction[1], 0.0);
        let small = HeatPicture::of_cells(3, |q, k| k == q);
        assert_eq!(small.fraction, [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
    }

    #[test]
    fn the_svg_merges_runs_and_escapes_the_title() {
        let pic = HeatPicture::of_cells(300, |q, k| k <= q);
        let svg = heat_svg(&pic, "R(1) <causal>", &SvgTheme::light(), &Palette::of(Theme::Light));
        assert!(svg.contains("R(1) &lt;causal&gt;"));
        // Each row: a run of full cells, a partial diagonal cell at most: few rectangles.
        assert!(svg.matches("<rect").count() < 3 * 256 + 20, "{} rects", svg.matches("<rect").count());
    }
}
