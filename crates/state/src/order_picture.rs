//! The order view as a pure picture (the UI turns it into SVG nodes): the laid-out Hasse diagram (or the full order's arcs) with the
//! lit, dimmed and hovered classes marked ([`OrderPicture`]), and the view box that zooms and
//! pans over it ([`ViewBox`]). Coordinates are the [`Scene`]'s.

use hasseflow_render::Scene;

use super::grid_picture::Rect;
use crate::{AppState, OrderView};

/// Width of the drawing area (CSS pixels).
pub const ORDER_W: f64 = 420.0;
/// Height of the drawing area (CSS pixels).
pub const ORDER_H: f64 = 360.0;
/// Room kept around the fitted diagram (CSS pixels), so no node touches the frame.
const PAD: f64 = 8.0;

/// The part of the scene shown: its top-left corner and the magnification.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewBox {
    /// Left, in scene coordinates.
    pub x: f64,
    /// Top, in scene coordinates.
    pub y: f64,
    /// CSS pixels per scene unit.
    pub zoom: f64,
}

impl ViewBox {
    /// The whole diagram, centred (never magnified past 1.5).
    pub fn whole(scene: &Scene) -> ViewBox {
        let zoom =
            ((ORDER_W - 2.0 * PAD) / scene.width.max(1.0)).min((ORDER_H - 2.0 * PAD) / scene.height.max(1.0)).min(1.5);
        ViewBox { x: (scene.width - ORDER_W / zoom) / 2.0, y: (scene.height - ORDER_H / zoom) / 2.0, zoom }
    }

    /// This view zoomed by `factor` about the point `(mx, my)` of the drawing area, which stays
    /// where it is.
    pub fn zoomed_at(self, (mx, my): (f64, f64), factor: f64) -> ViewBox {
        let (wx, wy) = (self.x + mx / self.zoom, self.y + my / self.zoom);
        let zoom = (self.zoom * factor).clamp(0.02, 8.0);
        ViewBox { x: wx - mx / zoom, y: wy - my / zoom, zoom }
    }

    /// This view zoomed by `factor` about the middle of the drawing area.
    pub fn zoomed(self, factor: f64) -> ViewBox {
        let (cx, cy) = (self.x + ORDER_W / 2.0 / self.zoom, self.y + ORDER_H / 2.0 / self.zoom);
        let zoom = (self.zoom * factor).clamp(0.02, 8.0);
        ViewBox { x: cx - ORDER_W / 2.0 / zoom, y: cy - ORDER_H / 2.0 / zoom, zoom }
    }

    /// This view dragged by `(dx, dy)` CSS pixels.
    pub fn dragged(self, (dx, dy): (f64, f64)) -> ViewBox {
        ViewBox { x: self.x - dx / self.zoom, y: self.y - dy / self.zoom, zoom: self.zoom }
    }

    /// The SVG `viewBox` attribute.
    pub fn attr(&self) -> String {
        format!("{:.1} {:.1} {:.1} {:.1}", self.x, self.y, ORDER_W / self.zoom, ORDER_H / self.zoom)
    }
}

/// An edge: its SVG path, and how it is marked.
#[derive(Clone, Debug, PartialEq)]
pub struct OrderEdge {
    /// SVG path data.
    pub d: String,
    /// A comparable pair of the full order (an arc), not a covering pair.
    pub full: bool,
    /// Both ends lit.
    pub lit: bool,
    /// Something is lit, but not this edge.
    pub dim: bool,
}

/// A class's node: its box, caption and marks.
#[derive(Clone, Debug, PartialEq)]
pub struct OrderNode {
    /// The class.
    pub class: usize,
    /// The box.
    pub rect: Rect,
    /// Centre of the caption.
    pub centre: (f64, f64),
    /// The (possibly shortened) caption.
    pub caption: String,
    /// `class c: members`, the full text (title and accessible name).
    pub title: String,
    /// Lit.
    pub lit: bool,
    /// The hovered class.
    pub hovered: bool,
    /// Something is lit, but not this class.
    pub dim: bool,
}

/// The order view's edges and nodes, in drawing order.
#[derive(Clone, Debug, PartialEq)]
pub struct OrderPicture {
    /// Edges (drawn first).
    pub edges: Vec<OrderEdge>,
    /// Nodes.
    pub nodes: Vec<OrderNode>,
}

impl OrderPicture {
    /// The picture of `scene` in `view`: its covering edges (Hasse) or the arcs of `full_edges`
    /// (full order; pairs naming no node are skipped), with the classes of `lit` lit, the rest
    /// dimmed when any is lit, and `hover_class` marked.
    pub fn new(
        scene: &Scene,
        view: OrderView,
        full_edges: &[(usize, usize)],
        lit: &[bool],
        hover_class: Option<usize>,
    ) -> OrderPicture {
        let any_lit = lit.iter().any(|&b| b);
        let is_lit = |c: usize| lit.get(c).copied().unwrap_or(false);
        let edge = |lo: usize, up: usize, d: String, full: bool| {
            let lit = any_lit && is_lit(lo) && is_lit(up);
            OrderEdge { d, full, lit, dim: any_lit && !lit }
        };
        let edges = match view {
            OrderView::Hasse => scene.edges.iter().map(|e| edge(e.lower, e.upper, e.path.svg_d(), false)).collect(),
            OrderView::Full => full_edges
                .iter()
                .filter_map(|&(lo, up)| {
                    let (a, b) = (scene.nodes.get(lo)?, scene.nodes.get(up)?);
                    // Arcs, bulging more the further apart the classes are, so that a
                    // non-covering pair is not hidden behind the chain of covers it spans.
                    let (x0, y0, x1, y1) = (a.x, a.y - a.h / 2.0, b.x, b.y + b.h / 2.0);
                    let bulge =
                        0.35 * (y0 - y1).abs().max((x1 - x0).abs()) * if (lo + up) % 2 == 0 { 1.0 } else { -1.0 };
                    let (mx, my) = ((x0 + x1) / 2.0 + bulge, (y0 + y1) / 2.0);
                    Some(edge(lo, up, format!("M {x0:.1} {y0:.1} Q {mx:.1} {my:.1} {x1:.1} {y1:.1}"), true))
                })
                .collect(),
        };
        let nodes = scene
            .nodes
            .iter()
            .map(|n| {
                let c = n.class;
                let lit = is_lit(c);
                OrderNode {
                    class: c,
                    rect: Rect::new(n.x - n.w / 2.0, n.y - n.h / 2.0, n.w, n.h),
                    centre: (n.x, n.y),
                    caption: n.caption.clone(),
                    title: format!("class {c}: {}", n.full),
                    lit,
                    hovered: hover_class == Some(c),
                    dim: any_lit && !lit,
                }
            })
            .collect();
        OrderPicture { edges, nodes }
    }
}

impl AppState {
    /// The classes the order view lights: those on a path from the hovered cell's key class up
    /// to its query class ([`AppState::hovered_path`]), else the hovered class's down-set, else
    /// none.
    pub fn order_lit(&self) -> Vec<bool> {
        if self.editor.hover_cell.is_some() {
            return self.hovered_path();
        }
        let a = &self.editor.derived.analysis;
        let mut lit = vec![false; a.classes().len()];
        if let Some(c) = self.editor.hover_class.filter(|&c| c < lit.len()) {
            for (b, slot) in lit.iter_mut().enumerate() {
                *slot = a.class_le(b, c);
            }
        }
        lit
    }
}

#[cfg(test)]
mod tests {
    use hasseflow_core::{Analysis, BitMatrix};
    use hasseflow_render::{HasseInput, LayoutOptions, layout};

    use super::*;

    /// The scene of a causal mask of side 3: the chain 0 < 1 < 2.
    fn chain() -> Scene {
        let a = Analysis::new(&BitMatrix::from_fn(3, |q, k| k <= q));
        layout(&HasseInput::from_analysis(&a, None), &LayoutOptions::default())
    }

    #[test]
    fn hasse_edges_and_nodes_carry_the_lit_and_hovered_marks() {
        let scene = chain();
        let lit = [true, true, false];
        let p = OrderPicture::new(&scene, OrderView::Hasse, &[], &lit, Some(2));
        assert_eq!(p.edges.len(), 2);
        let marks: Vec<_> = p.edges.iter().map(|e| (e.lit, e.dim, e.full)).collect();
        let lower_lit = scene.edges.iter().map(|e| (e.upper < 2, e.upper == 2, false)).collect::<Vec<_>>();
        assert_eq!(marks, lower_lit, "0 -> 1 lit, 1 -> 2 dimmed");
        assert_eq!(p.edges[0].d, scene.edges[0].path.svg_d());
        let n2 = p.nodes.iter().find(|n| n.class == 2);
        assert_eq!(n2.map(|n| (n.lit, n.dim, n.hovered)), Some((false, true, true)));
        let s2 = scene.nodes.iter().find(|n| n.class == 2).map(|n| (n.x - n.w / 2.0, n.y, n.full.clone()));
        assert_eq!(
            n2.map(|n| (n.rect.x, n.centre.1, n.title.clone())),
            s2.map(|(x, y, f)| (x, y, format!("class 2: {f}")))
        );
        let none = OrderPicture::new(&scene, OrderView::Hasse, &[], &[], None);
        assert!(none.edges.iter().all(|e| !e.lit && !e.dim) && none.nodes.iter().all(|n| !n.dim && !n.hovered));
    }

    #[test]
    fn the_full_order_draws_arcs_bulging_by_parity_and_skips_unknown_classes() {
        let scene = chain();
        let p = OrderPicture::new(&scene, OrderView::Full, &[(0, 2), (0, 1), (0, 9)], &[], None);
        assert_eq!(p.edges.len(), 2, "the pair naming class 9 is skipped");
        assert!(p.edges.iter().all(|e| e.full && e.d.starts_with("M ") && e.d.contains(" Q ")));
        let (a, b) = (&scene.nodes[0], &scene.nodes[2]);
        let (x0, x1) = (a.x, b.x);
        let (y0, y1) = (a.y - a.h / 2.0, b.y + b.h / 2.0);
        let mx = (x0 + x1) / 2.0 + 0.35 * (y0 - y1).abs().max((x1 - x0).abs());
        assert!(p.edges[0].d.contains(&format!("Q {mx:.1} ")), "0 + 2 even: bulges right: {}", p.edges[0].d);
    }

    #[test]
    fn the_hovered_cell_lights_its_path_else_the_hovered_class_lights_its_down_set() {
        use crate::{Action, Document, ViewAction};
        // Causal of side 4: every position its own class, class c = position c.
        let mut s = AppState::new(Document::new(BitMatrix::from_fn(4, |q, k| k <= q)), || 0.0);
        assert_eq!(s.order_lit(), [false; 4]);
        s.apply(Action::View(ViewAction::HoverClass(Some(2))));
        assert_eq!(s.order_lit(), [true, true, true, false], "2 sees 0, 1 and itself");
        s.apply(Action::View(ViewAction::HoverCell(Some((3, 1)))));
        assert_eq!(s.order_lit(), [false, true, true, true], "the cell wins: the classes from 1 up to 3");
        s.apply(Action::View(ViewAction::HoverCell(Some((1, 3)))));
        assert_eq!(s.order_lit(), [false; 4], "1 never sees 3");
    }

    #[test]
    fn the_view_box_fits_the_scene_and_zooms_about_a_fixed_point() {
        let scene = chain();
        let whole = ViewBox::whole(&scene);
        assert!(whole.zoom <= 1.5 && whole.zoom > 0.0);
        // The scene's middle is the view's middle.
        assert!((whole.x + ORDER_W / 2.0 / whole.zoom - scene.width / 2.0).abs() < 1e-9);
        let z = whole.zoomed_at((100.0, 50.0), 1.25);
        let at = |v: ViewBox| (v.x + 100.0 / v.zoom, v.y + 50.0 / v.zoom);
        assert!((at(z).0 - at(whole).0).abs() < 1e-9 && (at(z).1 - at(whole).1).abs() < 1e-9);
        assert_eq!(whole.zoomed(1e9).zoom, 8.0, "zoom is clamped");
        let d = whole.dragged((10.0, -20.0));
        assert_eq!((d.x, d.y), (whole.x - 10.0 / whole.zoom, whole.y + 20.0 / whole.zoom));
        let v = ViewBox { x: 1.0, y: 2.0, zoom: 2.0 };
        assert_eq!(v.attr(), "1.0 2.0 210.0 180.0");
    }
}
