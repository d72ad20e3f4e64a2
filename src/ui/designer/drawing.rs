//! The designer's drawings: a task's or the merged task's inputs/labels row, a small read-only
//! mask canvas, and a small Hasse diagram whose nodes are filled by merged node (hovering one
//! lights up its equivalents).

use std::rc::Rc;

use hasseflow_core::BitMatrix;
use hasseflow_render::Scene;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};
use yew::prelude::*;

use crate::ui::palette::{Palette, Theme};

/// Fill colour of merged node `c` (and of every task node equivalent to it): golden-angle hues,
/// light enough for dark captions. An SVG attribute, not a style (the CSP forbids inline styles).
fn node_fill(c: usize) -> String {
    format!("hsl({:.0}, 70%, 78%)", (c as f64 * 137.508) % 360.0)
}
/// Inputs/labels row properties.
#[derive(Properties, PartialEq, Clone)]
pub struct IoRowProps {
    /// Input text per position.
    pub inputs: Vec<String>,
    /// Label text per position.
    pub labels: Vec<Option<String>>,
    /// Element id.
    #[prop_or_default]
    pub id: Option<AttrValue>,
    /// Positions to highlight (the hovered merged node's members).
    #[prop_or_default]
    pub lit: Option<Rc<Vec<usize>>>,
}

/// One column per position: its input above its label (text only).
#[function_component(IoRow)]
pub fn io_row(p: &IoRowProps) -> Html {
    let lit = |i: usize| p.lit.as_ref().is_some_and(|l| l.contains(&i)).then_some("lit");
    html! {
        <div class="io-row" id={p.id.clone()}>
            <table>
                <tr class="inputs"><th>{"in"}</th>{ for p.inputs.iter().enumerate().map(|(i, t)| html! {
                    <td class={classes!(lit(i))}>{ t.clone() }</td> }) }</tr>
                <tr class="labels"><th>{"label"}</th>{ for p.labels.iter().enumerate().map(|(i, l)| html! {
                    <td class={classes!(lit(i))}>{ l.clone().unwrap_or_else(|| "·".into()) }</td>
                }) }</tr>
            </table>
        </div>
    }
}

/// Mask canvas properties.
#[derive(Properties, Clone)]
pub struct MaskCanvasProps {
    /// The mask.
    pub mask: Rc<BitMatrix>,
    /// CSS size (square).
    pub px: f64,
    /// Theme.
    pub theme: Theme,
    /// Element id (the canvas also carries its rows in `data-rows`, for tests).
    #[prop_or_default]
    pub id: Option<AttrValue>,
    /// Positions whose rows and columns are highlighted (listed in `data-lit`).
    #[prop_or_default]
    pub lit: Option<Rc<Vec<usize>>>,
}

impl PartialEq for MaskCanvasProps {
    fn eq(&self, o: &Self) -> bool {
        *self.mask == *o.mask && self.px == o.px && self.theme == o.theme && self.id == o.id && self.lit == o.lit
    }
}

/// A small read-only mask: set cells in ink, row `q` reads column `k`.
#[function_component(MaskCanvas)]
pub fn mask_canvas(p: &MaskCanvasProps) -> Html {
    let node = use_node_ref();
    {
        let (node, p) = (node.clone(), p.clone());
        use_effect_with(p.clone(), move |_| {
            let Some(canvas) = node.cast::<HtmlCanvasElement>() else { return };
            let Some(ctx) =
                canvas.get_context("2d").ok().flatten().and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
            else {
                return;
            };
            let pal = Palette::of(p.theme);
            let scale = f64::from(canvas.width()) / p.px;
            let _ = ctx.set_transform(scale, 0.0, 0.0, scale, 0.0, 0.0);
            ctx.set_fill_style_str(pal.background_css);
            ctx.fill_rect(0.0, 0.0, p.px, p.px);
            let n = p.mask.n().max(1);
            let s = p.px / n as f64;
            ctx.set_fill_style_str(pal.accent_css);
            for q in 0..p.mask.n() {
                for k in p.mask.row_ones(q) {
                    ctx.fill_rect(k as f64 * s, q as f64 * s, s.max(0.5), s.max(0.5));
                }
            }
            if let Some(lit) = &p.lit {
                // The hovered node's rows (what it reads) and columns (who reads it).
                ctx.set_fill_style_str(pal.highlight_css);
                for &i in lit.iter().filter(|&&i| i < n) {
                    ctx.fill_rect(0.0, i as f64 * s, p.px, s.max(0.5));
                    ctx.fill_rect(i as f64 * s, 0.0, s.max(0.5), p.px);
                }
            }
            if s >= 6.0 {
                ctx.set_stroke_style_str(pal.gridline_css);
                ctx.set_line_width(0.5);
                ctx.begin_path();
                for i in 0..=n {
                    let t = i as f64 * s;
                    ctx.move_to(t, 0.0);
                    ctx.line_to(t, p.px);
                    ctx.move_to(0.0, t);
                    ctx.line_to(p.px, t);
                }
                ctx.stroke();
            }
        });
    }
    let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio()).max(1.0);
    let px = (p.px * dpr).round() as u32;
    let rows = p.id.as_ref().map(|_| p.mask.to_row_strings().join(","));
    let lit = p.lit.as_ref().map(|l| l.iter().map(usize::to_string).collect::<Vec<_>>().join(","));
    html! {
        <canvas ref={node} id={p.id.clone()} class="mask-canvas" data-rows={rows} data-lit={lit} width={px.to_string()} height={px.to_string()}
            data-px={p.px.to_string()} role="img"
            aria-label={format!("{} x {} mask", p.mask.n(), p.mask.n())} />
    }
}

/// Small Hasse diagram properties.
#[derive(Properties, Clone)]
pub struct MiniHasseProps {
    /// The laid-out diagram.
    pub scene: Rc<Scene>,
    /// Merged node of each node (colour and hover identity).
    pub colour: Rc<Vec<usize>>,
    /// Hovered merged node.
    pub hover: Option<usize>,
    /// Hover callback (merged node).
    pub on_hover: Callback<Option<usize>>,
    /// CSS width.
    pub width: f64,
    /// CSS height.
    pub height: f64,
    /// A second line under each node (the tasks a merged node serves).
    pub served: Option<Rc<Vec<String>>>,
    /// Element id.
    #[prop_or_default]
    pub id: Option<AttrValue>,
}

impl PartialEq for MiniHasseProps {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.scene, &o.scene) && self.colour == o.colour && self.hover == o.hover
    }
}

/// A Hasse diagram fitted into a box; nodes filled by merged node, minimal ones at the bottom.
#[function_component(MiniHasse)]
pub fn mini_hasse(p: &MiniHasseProps) -> Html {
    let s = &p.scene;
    let pad = 14.0;
    let view_box = format!("{:.1} {:.1} {:.1} {:.1}", -pad, -pad, s.width + 2.0 * pad, s.height + 2.0 * pad + 12.0);
    let merged = |c: usize| p.colour.get(c).copied().unwrap_or(c);
    let edges: Html = s
        .edges
        .iter()
        .map(|e| {
            let lit = p.hover.is_some_and(|h| merged(e.lower) == h || merged(e.upper) == h);
            html! { <path class={classes!("edge", lit.then_some("lit"))} d={e.path.svg_d()} /> }
        })
        .collect();
    let nodes: Html = s
        .nodes
        .iter()
        .map(|n| {
            let m = merged(n.class);
            let lit = p.hover == Some(m);
            let class = classes!("node", lit.then_some("equiv"), (p.hover.is_some() && !lit).then_some("dim"));
            let enter = {
                let cb = p.on_hover.clone();
                Callback::from(move |_: PointerEvent| cb.emit(Some(m)))
            };
            let leave = {
                let cb = p.on_hover.clone();
                Callback::from(move |_: PointerEvent| cb.emit(None))
            };
            let served = p.served.as_ref().and_then(|v| v.get(n.class)).cloned();
            let title = match &served {
                Some(sv) => format!("{} — serves {sv}", n.full),
                None => n.full.clone(),
            };
            html! {
                <g class={class} data-merged={m.to_string()} onpointerenter={enter} onpointerleave={leave}>
                    <title>{ title }</title>
                    <rect x={format!("{:.1}", n.x - n.w / 2.0)} y={format!("{:.1}", n.y - n.h / 2.0)}
                        width={format!("{:.1}", n.w)} height={format!("{:.1}", n.h)} rx="5" fill={node_fill(m)} />
                    <text x={format!("{:.1}", n.x)} y={format!("{:.1}", n.y)} text-anchor="middle" dominant-baseline="central">
                        { n.caption.clone() }
                    </text>
                    if let Some(sv) = served {
                        <text class="served" x={format!("{:.1}", n.x)} y={format!("{:.1}", n.y + n.h / 2.0 + 9.0)} text-anchor="middle">
                            { sv }
                        </text>
                    }
                </g>
            }
        })
        .collect();
    html! {
        <svg id={p.id.clone()} class="mini-hasse" width={p.width.to_string()} height={p.height.to_string()} viewBox={view_box}
            preserveAspectRatio="xMidYMid meet" role="img" aria-label="Hasse diagram: information flows up">
            <g class="edges">{ edges }</g>
            <g class="nodes">{ nodes }</g>
        </svg>
    }
}
