//! A standalone SVG document for a [`Scene`]: what "export the Hasse diagram" downloads and what
//! the CLI can print. Every caption is XML-escaped: labels are user text, never markup.

use std::fmt::Write as _;

use crate::scene::Scene;

/// Colours of an exported drawing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SvgTheme {
    /// Page background.
    pub background: &'static str,
    /// Node fill.
    pub node_fill: &'static str,
    /// Node outline and text.
    pub ink: &'static str,
    /// Edges.
    pub edge: &'static str,
}

impl SvgTheme {
    /// Dark ink on white.
    pub fn light() -> Self {
        SvgTheme { background: "#ffffff", node_fill: "#eef4fa", ink: "#1d232a", edge: "#5b6570" }
    }
    /// Light ink on a dark page.
    pub fn dark() -> Self {
        SvgTheme { background: "#15181b", node_fill: "#22303c", ink: "#e6e8ea", edge: "#9aa4ad" }
    }
}

/// Escapes text for XML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Writes `scene` as an SVG document.
pub fn to_svg(scene: &Scene, theme: &SvgTheme) -> String {
    to_svg_within(scene, theme, f64::INFINITY, f64::INFINITY)
}

/// Writes `scene` as an SVG document displayed at most `max_w x max_h` pixels (scaled down
/// whole, aspect kept; the drawing's coordinates are the scene's).
pub fn to_svg_within(scene: &Scene, theme: &SvgTheme, max_w: f64, max_h: f64) -> String {
    let mut s = String::new();
    let (w, h) = (scene.width.max(1.0), scene.height.max(1.0));
    let scale = (max_w / w).min(max_h / h).min(1.0);
    let (dw, dh) = (w * scale, h * scale);
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{dw:.0}\" height=\"{dh:.0}\" viewBox=\"0 0 {w:.1} {h:.1}\" \
         font-family=\"system-ui, sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(
        s,
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" \
         orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"{}\"/></marker></defs>",
        theme.edge
    );
    let _ = writeln!(s, "<rect width=\"100%\" height=\"100%\" fill=\"{}\"/>", theme.background);
    for e in &scene.edges {
        let _ = writeln!(
            s,
            "<path class=\"edge\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.4\" marker-end=\"url(#arrow)\"/>",
            e.path.svg_d(),
            theme.edge
        );
    }
    for n in &scene.nodes {
        let _ = writeln!(
            s,
            "<g class=\"node\"><title>{}</title><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"5\" \
             fill=\"{}\" stroke=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" dominant-baseline=\"central\" \
             fill=\"{}\">{}</text></g>",
            escape(&n.full),
            n.x - n.w / 2.0,
            n.y - n.h / 2.0,
            n.w,
            n.h,
            theme.node_fill,
            theme.ink,
            n.x,
            n.y,
            theme.ink,
            escape(&n.caption)
        );
    }
    s.push_str("</svg>\n");
    s
}
