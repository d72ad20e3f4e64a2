//! The mask grid as a pure picture, as Flow's [`super::LayerPicture`] and Models'
//! [`super::HeatPicture`] are: `R(L)` cell by cell, shaded by first-reach layer ([`GridCells`],
//! recomputed only when the mask or the layer changes), and everything drawn over it for one zoom
//! and pan ([`GridFrame`]: cell borders, block tiles, the hovered class and cell, the rulers'
//! marks and labels). The UI's painter only turns it into canvas calls, picking the theme's
//! colour for each kind of mark. Coordinates are CSS pixels of a [`CANVAS_PX`] square canvas
//! whose top and left [`RULER`] pixels hold the rulers.

use hasseflow_core::BitMatrix;
use hasseflow_core::interop::{BlockStats, Tile};

use crate::Derived;

/// CSS size of the canvas (square).
pub const CANVAS_PX: f64 = 520.0;
/// Width of the rulers.
pub const RULER: f64 = 30.0;

/// An axis-aligned rectangle in CSS pixels (top-left corner, width, height).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    /// Left.
    pub x: f64,
    /// Top.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

impl Rect {
    /// The rectangle at `(x, y)` of size `w x h`.
    pub const fn new(x: f64, y: f64, w: f64, h: f64) -> Rect {
        Rect { x, y, w, h }
    }
}

/// A straight line segment in CSS pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    /// Start.
    pub from: (f64, f64),
    /// End.
    pub to: (f64, f64),
}

/// Zoom and pan of the grid.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct GridView {
    /// Magnification (1: the whole grid fills the canvas beside the rulers).
    pub zoom: f64,
    /// Offset of the grid's top-left corner from the rulers' corner.
    pub pan: (f64, f64),
}

impl GridView {
    /// The whole grid, unzoomed.
    pub const HOME: GridView = GridView { zoom: 1.0, pan: (0.0, 0.0) };

    /// Side of a cell of an `n x n` grid.
    pub fn cell(&self, n: usize) -> f64 {
        (CANVAS_PX - RULER) / n as f64 * self.zoom
    }

    /// The cell `(q, k)` under canvas point `(x, y)` (CSS pixels).
    pub fn cell_at(&self, n: usize, x: f64, y: f64) -> Option<(usize, usize)> {
        let s = self.cell(n);
        let k = ((x - RULER - self.pan.0) / s).floor();
        let q = ((y - RULER - self.pan.1) / s).floor();
        (x >= RULER && y >= RULER && k >= 0.0 && q >= 0.0 && (k as usize) < n && (q as usize) < n)
            .then_some((q as usize, k as usize))
    }

    /// This view with the zoom between 1 and twice `n / 4`, and the grid covering the canvas.
    pub fn clamped(self, n: usize) -> GridView {
        let zoom = self.zoom.clamp(1.0, (n as f64 / 4.0).max(1.0) * 2.0);
        let span = (CANVAS_PX - RULER) * zoom;
        let min = (CANVAS_PX - RULER) - span;
        GridView { zoom, pan: (self.pan.0.clamp(min, 0.0), self.pan.1.clamp(min, 0.0)) }
    }

    /// The view after a pinch from `(d0, mid0)` at `start` to `(d, mid)`: zoom by `d / d0`, and
    /// the grid point that was under `mid0` follows the fingers to `mid`.
    pub fn pinched(start: GridView, (d0, mid0): (f64, (f64, f64)), (d, mid): (f64, (f64, f64)), n: usize) -> GridView {
        let zoom = start.zoom * d / d0;
        let z = GridView { zoom, pan: (0.0, 0.0) }.clamped(n).zoom;
        let follow = |m0: f64, m: f64, pan0: f64| {
            let u = (m0 - RULER - pan0) / start.zoom;
            m - RULER - u * z
        };
        GridView { zoom: z, pan: (follow(mid0.0, mid.0, start.pan.0), follow(mid0.1, mid.1, start.pan.1)) }.clamped(n)
    }

    /// This view zoomed by `factor` about canvas point `(x, y)`, which stays where it is.
    pub fn zoomed_at(self, (x, y): (f64, f64), factor: f64, n: usize) -> GridView {
        let zoom = self.zoom * factor;
        let (gx, gy) = (x - RULER, y - RULER);
        let pan = (gx - (gx - self.pan.0) * zoom / self.zoom, gy - (gy - self.pan.1) * zoom / self.zoom);
        GridView { zoom, pan }.clamped(n)
    }

    /// This view zoomed by `factor` about the middle of the grid area.
    pub fn zoomed(self, factor: f64, n: usize) -> GridView {
        let c = (CANVAS_PX - RULER) / 2.0;
        let zoom = self.zoom * factor;
        GridView { zoom, pan: (c - (c - self.pan.0) * zoom / self.zoom, c - (c - self.pan.1) * zoom / self.zoom) }
            .clamped(n)
    }

    /// This view moved by `(dx, dy)`.
    pub fn panned(self, (dx, dy): (f64, f64), n: usize) -> GridView {
        GridView { zoom: self.zoom, pan: (self.pan.0 + dx, self.pan.1 + dy) }.clamped(n)
    }
}

/// What a grid picture shows: the mask, its analysis and what is hovered.
#[derive(Clone, Copy, Debug)]
pub struct GridInput<'a> {
    /// The mask.
    pub mask: &'a BitMatrix,
    /// Its analysis.
    pub derived: &'a Derived,
    /// The layer `L` shown.
    pub layer: usize,
    /// Position labels (on the rulers, where cells are wide enough).
    pub labels: Option<&'a [String]>,
    /// The hovered cell `(q, k)`.
    pub hover: Option<(usize, usize)>,
    /// The hovered class in the order view.
    pub hover_class: Option<usize>,
    /// Block statistics to overlay as tiles.
    pub blocks: Option<&'a BlockStats>,
}

/// How a cell is shaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shade {
    /// Not in the mask and not reached by layer `L`.
    Empty,
    /// In the mask, not reached yet (only at `L = 0`: the mask reaches at layer 1).
    Pending,
    /// First reached at the layer shown (`L > 0`).
    New,
    /// First reached at this earlier layer (0: the diagonal).
    Layer(usize),
}

/// The cells of the grid at one layer, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct GridCells {
    /// Side.
    pub n: usize,
    /// `L*`, the end of the layer colour ramp.
    pub depth: usize,
    /// Per cell, row `q` then column `k`.
    pub shades: Vec<Shade>,
}

impl GridCells {
    /// The cells of `input` at its layer: `O(n²)`.
    pub fn new(input: &GridInput<'_>) -> GridCells {
        let n = input.mask.n();
        let layer = input.layer;
        let fr = &input.derived.first_reach;
        let mut shades = Vec::with_capacity(n * n);
        for q in 0..n {
            for k in 0..n {
                shades.push(match fr.get(q, k) {
                    Some(d) if d == layer && layer > 0 => Shade::New,
                    Some(d) if d <= layer => Shade::Layer(d),
                    _ if input.mask.get(q, k) => Shade::Pending,
                    _ => Shade::Empty,
                });
            }
        }
        GridCells { n, depth: input.derived.analysis.depth(), shades }
    }

    /// The shade of cell `(q, k)`.
    ///
    /// # Panics
    /// If `q` or `k` is not below `n`.
    pub fn shade(&self, q: usize, k: usize) -> Shade {
        self.shades[q * self.n + k]
    }
}

/// Lines stroked at one width.
#[derive(Clone, Debug, PartialEq)]
pub struct Strokes {
    /// Line width.
    pub width: f64,
    /// The lines, in drawing order.
    pub segments: Vec<Segment>,
}

/// The block-sparsity overlay: full tiles shaded, partial ones lighter, empty ones left clear,
/// and the tile borders.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockOverlay {
    /// Non-empty tiles with their opacity (0.35 full, 0.15 partial).
    pub tiles: Vec<(Rect, f64)>,
    /// Tile borders (1.5 px).
    pub lines: Strokes,
}

/// The hovered class: its members' rows and columns, and the down-set's columns (fainter).
#[derive(Clone, Debug, PartialEq)]
pub struct ClassOverlay {
    /// A row band then a column band per member.
    pub bands: Vec<Rect>,
    /// Columns of the positions the class sees outside itself (drawn at 0.45 opacity).
    pub down_set: Vec<Rect>,
}

/// The hovered cell: its row and column, and its outline.
#[derive(Clone, Debug, PartialEq)]
pub struct HoverOverlay {
    /// The row band, then the column band.
    pub bands: [Rect; 2],
    /// The cell's outline (stroked 2 px).
    pub outline: Rect,
}

/// A ruler label, centred at `(x, y)`.
#[derive(Clone, Debug, PartialEq)]
pub struct RulerLabel {
    /// Index or position label.
    pub text: String,
    /// Centre.
    pub x: f64,
    /// Middle.
    pub y: f64,
    /// On the hovered cell's row or column (drawn in ink, not muted).
    pub hot: bool,
}

/// Everything drawn over the cells for one view, in drawing order.
#[derive(Clone, Debug, PartialEq)]
pub struct GridFrame {
    /// Side of a cell.
    pub cell: f64,
    /// Top-left corner of the cell image.
    pub origin: (f64, f64),
    /// Side of the cell image (`cell * n`).
    pub side: f64,
    /// Cell borders, when cells are big enough to read them.
    pub borders: Option<Strokes>,
    /// Block tiles.
    pub blocks: Option<BlockOverlay>,
    /// The hovered class.
    pub class: Option<ClassOverlay>,
    /// The hovered cell.
    pub hover: Option<HoverOverlay>,
    /// Marks on the key ruler under the hovered class's down-set.
    pub ruler_marks: Vec<Rect>,
    /// Ruler labels at a readable spacing: per index, the key ruler's then the query ruler's.
    pub labels: Vec<RulerLabel>,
}

impl GridFrame {
    /// The frame of `input` seen through `view`: `O(n + members + tiles)`.
    pub fn new(input: &GridInput<'_>, view: GridView) -> GridFrame {
        let n = input.mask.n();
        let s = view.cell(n);
        let side = s * n as f64;
        let (ox, oy) = (RULER + view.pan.0, RULER + view.pan.1);
        let borders = (s >= 7.0).then(|| Strokes {
            width: if s >= 16.0 { 1.0 } else { 0.5 },
            segments: (0..=n).flat_map(|i| cross((ox, oy), i as f64 * s, side)).collect(),
        });
        let blocks = input.blocks.filter(|b| b.block_size > 0).map(|b| block_overlay(b, (ox, oy), s, side));
        let a = &input.derived.analysis;
        let mut down_set = vec![false; n];
        let class = input.hover_class.filter(|&c| c < a.classes().len()).map(|c| {
            let bands = a.classes()[c]
                .iter()
                .flat_map(|&m| [Rect::new(ox, oy + m as f64 * s, side, s), Rect::new(ox + m as f64 * s, oy, s, side)])
                .collect();
            let seen = a.down_set(c);
            for &k in &seen {
                down_set[k] = true;
            }
            let down_set = seen
                .iter()
                .filter(|&&k| a.class_of()[k] != c)
                .map(|&k| Rect::new(ox + k as f64 * s, oy, s, side))
                .collect();
            ClassOverlay { bands, down_set }
        });
        let hover = input.hover.map(|(q, k)| HoverOverlay {
            bands: [Rect::new(ox, oy + q as f64 * s, side, s), Rect::new(ox + k as f64 * s, oy, s, side)],
            outline: Rect::new(ox + k as f64 * s, oy + q as f64 * s, s.max(2.0), s.max(2.0)),
        });
        let ruler_marks = down_set
            .iter()
            .enumerate()
            .filter(|(_, d)| **d)
            .map(|(k, _)| ox + k as f64 * s)
            .filter(|&x| x + s >= RULER && x <= CANVAS_PX)
            .map(|x| Rect::new(x.max(RULER), RULER - 5.0, s.max(1.0), 5.0))
            .collect();
        GridFrame {
            cell: s,
            origin: (ox, oy),
            side,
            borders,
            blocks,
            class,
            hover,
            ruler_marks,
            labels: labels(input, s, (ox, oy)),
        }
    }
}

/// The vertical then the horizontal line at offset `t` across a grid of side `side` at `o`.
fn cross((ox, oy): (f64, f64), t: f64, side: f64) -> [Segment; 2] {
    [Segment { from: (ox + t, oy), to: (ox + t, oy + side) }, Segment { from: (ox, oy + t), to: (ox + side, oy + t) }]
}

fn block_overlay(b: &BlockStats, (ox, oy): (f64, f64), s: f64, side: f64) -> BlockOverlay {
    let t = b.block_size as f64 * s;
    let mut tiles = Vec::new();
    for (bq, row) in b.grid.iter().enumerate() {
        for (bk, tile) in row.iter().enumerate() {
            let alpha = match tile {
                Tile::Full => 0.35,
                Tile::Partial => 0.15,
                Tile::Empty => continue,
            };
            let (x, y) = (ox + bk as f64 * t, oy + bq as f64 * t);
            tiles.push((Rect::new(x, y, t.min(side - bk as f64 * t), t.min(side - bq as f64 * t)), alpha));
        }
    }
    let segments = (0..=b.blocks).flat_map(|i| cross((ox, oy), (i as f64 * t).min(side), side)).collect();
    BlockOverlay { tiles, lines: Strokes { width: 1.5, segments } }
}

/// Ruler labels: indices at a readable spacing, position labels instead where a cell is wide
/// enough to hold a few characters; only those inside the canvas.
fn labels(input: &GridInput<'_>, s: f64, (ox, oy): (f64, f64)) -> Vec<RulerLabel> {
    let n = input.mask.n();
    let step = [1usize, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, 64, 100, 128, 256]
        .into_iter()
        .find(|&t| t as f64 * s >= 22.0)
        .unwrap_or(256);
    let text = |i: usize| match input.labels.and_then(|l| l.get(i)) {
        Some(l) if s >= 16.0 => {
            let max = ((s / 6.5) as usize).clamp(2, 4);
            if l.chars().count() > max {
                format!("{}…", l.chars().take(max - 1).collect::<String>())
            } else {
                l.clone()
            }
        }
        _ => i.to_string(),
    };
    let mut out = Vec::new();
    for i in (0..n).step_by(step) {
        let c = i as f64 * s + s / 2.0;
        let (x, y) = (ox + c, oy + c);
        if (RULER..=CANVAS_PX).contains(&x) {
            let hot = input.hover.is_some_and(|h| h.1 == i);
            out.push(RulerLabel { text: text(i), x, y: RULER / 2.0 - 2.0, hot });
        }
        if (RULER..=CANVAS_PX).contains(&y) {
            let hot = input.hover.is_some_and(|h| h.0 == i);
            out.push(RulerLabel { text: text(i), x: RULER / 2.0, y, hot });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use hasseflow_core::interop::block_stats;

    use super::*;

    fn causal(n: usize) -> BitMatrix {
        BitMatrix::from_fn(n, |q, k| k <= q)
    }

    fn input<'a>(mask: &'a BitMatrix, derived: &'a Derived, layer: usize) -> GridInput<'a> {
        GridInput { mask, derived, layer, labels: None, hover: None, hover_class: None, blocks: None }
    }

    #[test]
    fn cells_are_shaded_by_first_reach_layer_with_the_shown_layer_new() {
        // A chain 0 <- 1 <- 2 <- 3: row q reaches k at layer q - k.
        let mask = BitMatrix::from_fn(4, |q, k| q == k + 1);
        let derived = Derived::compute(&mask, || 0.0);
        let at0 = GridCells::new(&input(&mask, &derived, 0));
        assert_eq!(at0.depth, 3);
        assert_eq!(at0.shade(2, 2), Shade::Layer(0));
        assert_eq!(at0.shade(1, 0), Shade::Pending, "in the mask, not reached at L = 0");
        assert_eq!(at0.shade(0, 1), Shade::Empty);
        let at2 = GridCells::new(&input(&mask, &derived, 2));
        assert_eq!(at2.shade(1, 0), Shade::Layer(1));
        assert_eq!(at2.shade(2, 0), Shade::New, "first reached at the layer shown");
        assert_eq!(at2.shade(3, 0), Shade::Empty, "reached only at layer 3");
        assert_eq!(at2.shade(3, 3), Shade::Layer(0));
        assert_eq!(at2.shades.len(), 16);
    }

    #[test]
    fn the_view_finds_cells_and_zooms_about_a_fixed_point() {
        let v = GridView::HOME;
        assert_eq!(v.cell(49), 10.0);
        assert_eq!(v.cell_at(49, RULER + 25.0, RULER + 5.0), Some((0, 2)));
        assert_eq!(v.cell_at(49, RULER - 1.0, RULER + 5.0), None, "on the ruler");
        let z = v.zoomed_at((RULER + 100.0, RULER + 100.0), 2.0, 49);
        assert_eq!(z.zoom, 2.0);
        assert_eq!(z.cell_at(49, RULER + 100.0, RULER + 100.0), v.cell_at(49, RULER + 100.0, RULER + 100.0));
        assert_eq!(v.zoomed(0.5, 49), GridView::HOME, "never below the whole grid");
        assert_eq!(z.panned((1e6, -1e6), 49).pan, (0.0, -(CANVAS_PX - RULER)), "the grid covers the canvas");
    }

    #[test]
    fn the_frame_draws_borders_only_on_big_cells_and_shows_the_hovered_cell() {
        let mask = causal(10);
        let derived = Derived::compute(&mask, || 0.0);
        let mut i = input(&mask, &derived, 1);
        i.hover = Some((3, 5));
        let f = GridFrame::new(&i, GridView::HOME);
        assert_eq!(f.cell, 49.0);
        let b = f.borders.as_ref().map(|b| (b.width, b.segments.len()));
        assert_eq!(b, Some((1.0, 22)));
        let h = f.hover.as_ref().map(|h| h.outline);
        assert_eq!(h, Some(Rect::new(RULER + 5.0 * 49.0, RULER + 3.0 * 49.0, 49.0, 49.0)));
        assert_eq!(f.labels.len(), 20, "every index on both rulers");
        let hot: Vec<_> = f.labels.iter().filter(|l| l.hot).map(|l| l.text.as_str()).collect();
        assert_eq!(hot, ["3", "5"], "the hovered row's query label, then its column's key label");
        let big = causal(100);
        let derived = Derived::compute(&big, || 0.0);
        let f = GridFrame::new(&input(&big, &derived, 1), GridView::HOME);
        assert!(f.borders.is_none(), "4.9 px cells have no borders");
        assert_eq!(f.labels.len(), 2 * 20, "every fifth index: 5 x 4.9 px >= 22 px");
    }

    #[test]
    fn the_hovered_class_lights_its_members_and_its_down_set() {
        let mask = causal(4);
        let derived = Derived::compute(&mask, || 0.0);
        let mut i = input(&mask, &derived, 1);
        i.hover_class = Some(derived.analysis.class_of()[2]);
        let f = GridFrame::new(&i, GridView::HOME);
        let s = f.cell;
        let class = f.class.as_ref().map(|c| (c.bands.clone(), c.down_set.len()));
        let bands = vec![Rect::new(RULER, RULER + 2.0 * s, 4.0 * s, s), Rect::new(RULER + 2.0 * s, RULER, s, 4.0 * s)];
        assert_eq!(class, Some((bands, 2)), "position 2 sees 0 and 1 besides itself");
        assert_eq!(f.ruler_marks.len(), 3);
        assert_eq!(f.ruler_marks[1], Rect::new(RULER + s, RULER - 5.0, s, 5.0));
        i.hover_class = Some(99);
        let f = GridFrame::new(&i, GridView::HOME);
        assert!(f.class.is_none() && f.ruler_marks.is_empty(), "an unknown class lights nothing");
    }

    #[test]
    fn block_tiles_are_shaded_by_fill_and_clipped_to_the_grid() {
        // 5 x 5 causal in 2 x 2 tiles: 3 tiles a side, the last cut short.
        let mask = causal(5);
        let derived = Derived::compute(&mask, || 0.0);
        let stats = block_stats(&mask, 2);
        let Ok(stats) = stats else { panic!("block_stats refused {stats:?}") };
        let mut i = input(&mask, &derived, 1);
        i.blocks = Some(&stats);
        let f = GridFrame::new(&i, GridView::HOME);
        let Some(b) = f.blocks else { panic!("no block overlay") };
        let s = f.cell;
        // Diagonal tiles partial, below them full, above empty (not drawn).
        assert_eq!(b.tiles.len(), 6);
        assert_eq!(b.tiles[0], (Rect::new(RULER, RULER, 2.0 * s, 2.0 * s), 0.15));
        assert_eq!(b.tiles[1].1, 0.35);
        let last = b.tiles[5].0;
        assert_eq!((last.w, last.h), (s, s), "the last tile is one cell: clipped to the grid");
        assert_eq!(b.lines.segments.len(), 2 * 4);
        assert_eq!(b.lines.segments[7].from, (RULER, RULER + 5.0 * s), "the last border on the grid's edge");
    }

    #[test]
    fn long_position_labels_are_shortened_on_wide_cells() {
        let mask = causal(4);
        let derived = Derived::compute(&mask, || 0.0);
        let labels: Vec<String> = ["the", "a", "elephant", "x"].map(String::from).to_vec();
        let mut i = input(&mask, &derived, 1);
        i.labels = Some(&labels);
        let f = GridFrame::new(&i, GridView::HOME);
        let texts: Vec<_> = f.labels.iter().step_by(2).map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["the", "a", "ele…", "x"]);
    }
}
