//! The drawable scene (plain types a UI or the SVG writer draws) and the layout-rs engine, whose
//! [`RenderBackend`] we implement to record node boxes and edge curves instead of SVG text.

use layout::core::base::Orientation;
use layout::core::format::{ClipHandle, RenderBackend};
use layout::core::geometry::Point;
use layout::core::style::StyleAttr;
use layout::std_shapes::shapes::{Arrow, Element, ShapeKind};
use layout::topo::layout::VisualGraph;

use crate::{Engine, HasseInput};

/// Height of a node box.
pub(crate) const NODE_H: f64 = 26.0;
/// Margin around the drawing.
pub(crate) const MARGIN: f64 = 12.0;

/// A laid-out Hasse diagram: node boxes and edge paths in one coordinate system, `y` growing
/// downwards, minimal classes at the bottom.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    /// Width of the drawing.
    pub width: f64,
    /// Height of the drawing.
    pub height: f64,
    /// One node per class, indexed by class.
    pub nodes: Vec<SceneNode>,
    /// One edge per covering pair.
    pub edges: Vec<SceneEdge>,
    /// The engine that produced it.
    pub engine: Engine,
}

/// A class drawn as a box.
#[derive(Clone, Debug, PartialEq)]
pub struct SceneNode {
    /// Class index.
    pub class: usize,
    /// Centre x.
    pub x: f64,
    /// Centre y.
    pub y: f64,
    /// Box width.
    pub w: f64,
    /// Box height.
    pub h: f64,
    /// The caption shown (possibly shortened).
    pub caption: String,
    /// The full member list (for a tooltip).
    pub full: String,
}

/// How an edge is drawn.
#[derive(Clone, Debug, PartialEq)]
pub enum EdgePath {
    /// A straight segment.
    Line {
        /// Start (at the lower class).
        from: (f64, f64),
        /// End (at the upper class).
        to: (f64, f64),
    },
    /// layout-rs's curve: SVG path data made of numbers only (`M .. C .. S ..`).
    Curve {
        /// Path data.
        d: String,
        /// The end point (where the arrow head goes).
        to: (f64, f64),
    },
}

impl EdgePath {
    /// SVG path data for this edge.
    pub fn svg_d(&self) -> String {
        match self {
            EdgePath::Line { from, to } => format!("M {:.1} {:.1} L {:.1} {:.1}", from.0, from.1, to.0, to.1),
            EdgePath::Curve { d, .. } => d.clone(),
        }
    }
}

/// A covering pair drawn from `lower` up to `upper`.
#[derive(Clone, Debug, PartialEq)]
pub struct SceneEdge {
    /// Lower class (the source of information).
    pub lower: usize,
    /// Upper class.
    pub upper: usize,
    /// The drawn path.
    pub path: EdgePath,
}

/// Caption and full text of a class: member labels (or indices) joined by commas; runs of
/// consecutive indices are written `a–b`; shortened with `…` past `max_chars` characters.
pub fn node_caption(members: &[usize], labels: Option<&[String]>, max_chars: usize) -> (String, String) {
    let full = match labels {
        Some(l) => members.iter().map(|&p| l.get(p).cloned().unwrap_or_else(|| p.to_string())).collect::<Vec<_>>(),
        None => hasseflow_core::position_runs(members)
            .into_iter()
            .map(|(a, b)| match b - a {
                0 => a.to_string(),
                1 => format!("{a}, {b}"),
                _ => format!("{a}–{b}"),
            })
            .collect(),
    }
    .join(", ");
    let caption = if full.chars().count() > max_chars {
        let keep: String = full.chars().take(max_chars.saturating_sub(1)).collect();
        format!("{keep}…")
    } else {
        full.clone()
    };
    (caption, full)
}

/// Width of a box holding `caption` (a monospace-ish estimate; the UI font is close to it).
pub(crate) fn box_width(caption: &str) -> f64 {
    (caption.chars().count() as f64 * 7.4 + 18.0).max(30.0)
}

/// Records what layout-rs draws: boxes by the class index carried in `properties`, arrows by
/// their `lower,upper` properties.
#[derive(Default)]
struct Recorder {
    boxes: Vec<(usize, Point, Point)>,
    arrows: Vec<RecordedArrow>,
}

/// `(lower, upper, bezier path)` of one drawn arrow.
type RecordedArrow = (usize, usize, Vec<(Point, Point)>);

impl RenderBackend for Recorder {
    fn draw_rect(&mut self, xy: Point, size: Point, _: &StyleAttr, properties: Option<String>, _: Option<ClipHandle>) {
        if let Some(class) = properties.and_then(|p| p.parse::<usize>().ok()) {
            self.boxes.push((class, xy, size));
        }
    }
    fn draw_line(&mut self, _: Point, _: Point, _: &StyleAttr, _: Option<String>) {}
    fn draw_circle(&mut self, _: Point, _: Point, _: &StyleAttr, _: Option<String>) {}
    fn draw_text(&mut self, _: Point, _: &str, _: &StyleAttr) {}
    fn draw_arrow(
        &mut self,
        path: &[(Point, Point)],
        _: bool,
        _: (bool, bool),
        _: &StyleAttr,
        properties: Option<String>,
        _: &str,
    ) {
        let Some(p) = properties else { return };
        let mut it = p.split(',').map(|s| s.parse::<usize>());
        if let (Some(Ok(lower)), Some(Ok(upper))) = (it.next(), it.next()) {
            self.arrows.push((lower, upper, path.to_vec()));
        }
    }
    fn create_clip(&mut self, _: Point, _: Point, _: usize) -> ClipHandle {
        0
    }
}

/// The layout-rs engine: classes as boxes, covering pairs as arrows, laid out top to bottom
/// (lower classes first) and then flipped so that information flows upwards.
pub(crate) fn layout_rs(input: &HasseInput<'_>, captions: &[(String, String)]) -> Scene {
    let mut vg = VisualGraph::new(Orientation::TopToBottom);
    let handles: Vec<_> = captions
        .iter()
        .enumerate()
        .map(|(c, (caption, _))| {
            let size = Point::new(box_width(caption), NODE_H);
            let el = Element::create_with_properties(
                ShapeKind::new_box(caption),
                StyleAttr::simple(),
                Orientation::TopToBottom,
                size,
                c.to_string(),
            );
            vg.add_node(el)
        })
        .collect();
    for &(lower, upper) in input.edges {
        vg.add_edge(Arrow::simple_with_properties("", format!("{lower},{upper}")), handles[lower], handles[upper]);
    }
    let mut rec = Recorder::default();
    if !captions.is_empty() {
        vg.do_it(false, false, false, &mut rec);
    }

    // Bounding box of everything drawn, then translate and flip vertically.
    let (mut min_x, mut min_y, mut max_x, mut max_y) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    let mut grow = |p: Point| {
        min_x = min_x.min(p.x);
        min_y = min_y.min(p.y);
        max_x = max_x.max(p.x);
        max_y = max_y.max(p.y);
    };
    for (_, xy, size) in &rec.boxes {
        grow(*xy);
        grow(xy.add(*size));
    }
    for (_, _, path) in &rec.arrows {
        for (a, b) in path {
            grow(*a);
            grow(*b);
        }
    }
    if rec.boxes.is_empty() {
        return Scene {
            width: 2.0 * MARGIN,
            height: 2.0 * MARGIN,
            nodes: vec![],
            edges: vec![],
            engine: Engine::LayoutRs,
        };
    }
    let height = max_y - min_y + 2.0 * MARGIN;
    let width = max_x - min_x + 2.0 * MARGIN;
    let tx = |x: f64| x - min_x + MARGIN;
    let ty = |y: f64| height - (y - min_y + MARGIN);

    let mut nodes: Vec<Option<SceneNode>> = vec![None; captions.len()];
    for (class, xy, size) in rec.boxes {
        if let Some(slot) = nodes.get_mut(class) {
            let (caption, full) = captions[class].clone();
            *slot = Some(SceneNode {
                class,
                x: tx(xy.x + size.x / 2.0),
                y: ty(xy.y + size.y / 2.0),
                w: size.x,
                h: size.y,
                caption,
                full,
            });
        }
    }
    let nodes: Vec<SceneNode> = nodes
        .into_iter()
        .enumerate()
        .map(|(class, n)| {
            // layout-rs draws every box; this only guards against a surprise.
            n.unwrap_or_else(|| SceneNode {
                class,
                x: MARGIN,
                y: MARGIN,
                w: box_width(&captions[class].0),
                h: NODE_H,
                caption: captions[class].0.clone(),
                full: captions[class].1.clone(),
            })
        })
        .collect();
    let edges = rec
        .arrows
        .into_iter()
        .filter(|(_, _, path)| path.len() >= 2)
        .map(|(lower, upper, path)| {
            let p = |pt: Point| (tx(pt.x), ty(pt.y));
            let mut d = String::new();
            let (a, b) = (p(path[0].0), p(path[0].1));
            let (c, e) = (p(path[1].0), p(path[1].1));
            d.push_str(&format!(
                "M {:.1} {:.1} C {:.1} {:.1}, {:.1} {:.1}, {:.1} {:.1}",
                a.0, a.1, b.0, b.1, c.0, c.1, e.0, e.1
            ));
            let mut to = e;
            for (x, y) in path.iter().skip(2) {
                let (x, y) = (p(*x), p(*y));
                d.push_str(&format!(" S {:.1} {:.1}, {:.1} {:.1}", x.0, x.1, y.0, y.1));
                to = y;
            }
            SceneEdge { lower, upper, path: EdgePath::Curve { d, to } }
        })
        .collect();
    Scene { width, height, nodes, edges, engine: Engine::LayoutRs }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captions_compress_runs_and_shorten() {
        assert_eq!(node_caption(&[0, 1, 2, 3], None, 20).0, "0–3");
        assert_eq!(node_caption(&[0, 1, 5], None, 20).0, "0, 1, 5");
        let (short, full) = node_caption(&(0..40).step_by(2).collect::<Vec<_>>(), None, 10);
        assert_eq!(short.chars().count(), 10);
        assert!(short.ends_with('…'));
        assert!(full.starts_with("0, 2, 4"));
        let labels = vec!["w1".to_string(), "m1".to_string()];
        assert_eq!(node_caption(&[0, 1], Some(&labels), 20).0, "w1, m1");
    }
}
