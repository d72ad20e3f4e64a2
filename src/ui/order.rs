//! The order view: the Hasse diagram (or the full order) of the limit, drawn as SVG elements
//! from a [`Scene`] (captions are text nodes, never injected markup), with zoom and pan.

use std::rc::Rc;

use hasseflow_render::Scene;
use yew::prelude::*;

use crate::state::OrderView;

/// Order view properties; equality is by pointer for the heavy parts.
#[derive(Properties, Clone)]
pub struct OrderProps {
    /// The laid-out diagram.
    pub scene: Rc<Scene>,
    /// Comparable pairs `(lower, upper)` for the full-order view (empty in Hasse view).
    pub full_edges: Rc<Vec<(usize, usize)>>,
    /// Whether the full list was cut short.
    pub full_truncated: bool,
    /// Hasse or full order.
    pub view: OrderView,
    /// Classes to light up (the hovered cell's path or the hovered class's down-set).
    pub lit: Rc<Vec<bool>>,
    /// The hovered class.
    pub hover_class: Option<usize>,
    /// Hover callback.
    pub on_hover_class: Callback<Option<usize>>,
}

impl PartialEq for OrderProps {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.scene, &o.scene)
            && Rc::ptr_eq(&self.full_edges, &o.full_edges)
            && self.view == o.view
            && self.lit == o.lit
            && self.hover_class == o.hover_class
    }
}

#[derive(Clone, Copy, PartialEq)]
struct ViewBox {
    x: f64,
    y: f64,
    zoom: f64,
}

/// Width and height of the drawing area (CSS pixels).
const W: f64 = 420.0;
const H: f64 = 360.0;
/// Room kept around the fitted diagram (CSS pixels), so no node touches the frame.
const PAD: f64 = 8.0;

/// The order view component.
#[function_component(OrderDiagram)]
pub fn order_diagram(props: &OrderProps) -> Html {
    let scene = &props.scene;
    // The whole diagram, centred (never magnified past 1.5). It is shown on load and after every
    // change of the scene, unless the user has zoomed or panned since: then their view stays,
    // until "all" fits the diagram again.
    let whole = {
        let zoom = ((W - 2.0 * PAD) / scene.width.max(1.0)).min((H - 2.0 * PAD) / scene.height.max(1.0)).min(1.5);
        ViewBox { x: (scene.width - W / zoom) / 2.0, y: (scene.height - H / zoom) / 2.0, zoom }
    };
    let vb = use_state(|| whole);
    let user_moved = use_mut_ref(|| false);
    {
        let (vb, user_moved) = (vb.clone(), user_moved.clone());
        use_effect_with(Rc::as_ptr(scene) as usize, move |_| {
            if !*user_moved.borrow() {
                vb.set(whole);
            }
        });
    }
    let drag = use_mut_ref(|| None::<(f64, f64, ViewBox)>);

    let onwheel = {
        let (vb, user_moved) = (vb.clone(), user_moved.clone());
        Callback::from(move |e: WheelEvent| {
            e.prevent_default();
            *user_moved.borrow_mut() = true;
            let v = *vb;
            let f = if e.delta_y() < 0.0 { 1.25 } else { 0.8 };
            let (mx, my) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
            let (wx, wy) = (v.x + mx / v.zoom, v.y + my / v.zoom);
            let zoom = (v.zoom * f).clamp(0.02, 8.0);
            vb.set(ViewBox { x: wx - mx / zoom, y: wy - my / zoom, zoom });
        })
    };
    let onpointerdown = {
        let (vb, drag) = (vb.clone(), drag.clone());
        Callback::from(move |e: PointerEvent| {
            if e.button() == 0 {
                *drag.borrow_mut() = Some((f64::from(e.client_x()), f64::from(e.client_y()), *vb));
            }
        })
    };
    let onpointermove = {
        let (vb, drag, user_moved) = (vb.clone(), drag.clone(), user_moved.clone());
        Callback::from(move |e: PointerEvent| {
            if let Some((x0, y0, v0)) = *drag.borrow() {
                if e.buttons() & 1 == 0 {
                    return;
                }
                let (dx, dy) = (f64::from(e.client_x()) - x0, f64::from(e.client_y()) - y0);
                if dx != 0.0 || dy != 0.0 {
                    *user_moved.borrow_mut() = true;
                }
                vb.set(ViewBox { x: v0.x - dx / v0.zoom, y: v0.y - dy / v0.zoom, zoom: v0.zoom });
            }
        })
    };
    let onpointerup = {
        let drag = drag.clone();
        Callback::from(move |_: PointerEvent| *drag.borrow_mut() = None)
    };
    let zoom_by = |f: f64| {
        let (vb, user_moved) = (vb.clone(), user_moved.clone());
        Callback::from(move |_: MouseEvent| {
            *user_moved.borrow_mut() = true;
            let v = *vb;
            let (cx, cy) = (v.x + W / 2.0 / v.zoom, v.y + H / 2.0 / v.zoom);
            let zoom = (v.zoom * f).clamp(0.02, 8.0);
            vb.set(ViewBox { x: cx - W / 2.0 / zoom, y: cy - H / 2.0 / zoom, zoom });
        })
    };
    let reset = {
        let (vb, user_moved) = (vb.clone(), user_moved.clone());
        Callback::from(move |_: MouseEvent| {
            *user_moved.borrow_mut() = false;
            vb.set(whole);
        })
    };

    let v = *vb;
    let view_box = format!("{:.1} {:.1} {:.1} {:.1}", v.x, v.y, W / v.zoom, H / v.zoom);
    let any_lit = props.lit.iter().any(|&b| b);
    let is_lit = |c: usize| props.lit.get(c).copied().unwrap_or(false);
    let edges: Html = match props.view {
        OrderView::Hasse => scene
            .edges
            .iter()
            .map(|e| {
                let lit = any_lit && is_lit(e.lower) && is_lit(e.upper);
                let class = classes!("edge", lit.then_some("lit"), (any_lit && !lit).then_some("dim"));
                let d = e.path.svg_d();
                html! { <path class={class} d={d} marker-end="url(#arrowhead)" /> }
            })
            .collect(),
        OrderView::Full => props
            .full_edges
            .iter()
            .filter_map(|&(lo, up)| {
                let (a, b) = (scene.nodes.get(lo)?, scene.nodes.get(up)?);
                let lit = any_lit && is_lit(lo) && is_lit(up);
                let class = classes!("edge", "full", lit.then_some("lit"), (any_lit && !lit).then_some("dim"));
                // Arcs, bulging more the further apart the classes are, so that a non-covering
                // pair is not hidden behind the chain of covers it spans.
                let (x0, y0, x1, y1) = (a.x, a.y - a.h / 2.0, b.x, b.y + b.h / 2.0);
                let bulge = 0.35 * (y0 - y1).abs().max((x1 - x0).abs()) * if (lo + up) % 2 == 0 { 1.0 } else { -1.0 };
                let (mx, my) = ((x0 + x1) / 2.0 + bulge, (y0 + y1) / 2.0);
                let d = format!("M {x0:.1} {y0:.1} Q {mx:.1} {my:.1} {x1:.1} {y1:.1}");
                Some(html! { <path class={class} d={d} marker-end="url(#arrowhead)" /> })
            })
            .collect(),
    };
    let nodes: Html = scene
        .nodes
        .iter()
        .map(|n| {
            let c = n.class;
            let lit = is_lit(c);
            let class = classes!(
                "node",
                lit.then_some("lit"),
                (props.hover_class == Some(c)).then_some("hovered"),
                (any_lit && !lit).then_some("dim")
            );
            let enter = {
                let cb = props.on_hover_class.clone();
                Callback::from(move |_: PointerEvent| cb.emit(Some(c)))
            };
            let leave = {
                let cb = props.on_hover_class.clone();
                Callback::from(move |_: PointerEvent| cb.emit(None))
            };
            let focus = {
                let cb = props.on_hover_class.clone();
                Callback::from(move |_: FocusEvent| cb.emit(Some(c)))
            };
            let blur = {
                let cb = props.on_hover_class.clone();
                Callback::from(move |_: FocusEvent| cb.emit(None))
            };
            html! {
                <g class={class} data-class={c.to_string()} tabindex="0" role="listitem"
                    aria-label={format!("class {c}: {}", n.full)}
                    onpointerenter={enter} onpointerleave={leave} onfocus={focus} onblur={blur}>
                    <title>{ format!("class {c}: {}", n.full) }</title>
                    <rect x={format!("{:.1}", n.x - n.w / 2.0)} y={format!("{:.1}", n.y - n.h / 2.0)}
                        width={format!("{:.1}", n.w)} height={format!("{:.1}", n.h)} rx="5" />
                    <text x={format!("{:.1}", n.x)} y={format!("{:.1}", n.y)} text-anchor="middle" dominant-baseline="central">
                        { n.caption.clone() }
                    </text>
                </g>
            }
        })
        .collect();
    html! {
        <div class="order-wrap">
            <svg id="hasse" class="order" width={W.to_string()} height={H.to_string()} viewBox={view_box}
                role="list" aria-label="Order diagram of the limit: minimal classes at the bottom, information flows up"
                {onwheel} {onpointerdown} {onpointermove} onpointerup={onpointerup.clone()} onpointerleave={onpointerup}>
                <defs>
                    <marker id="arrowhead" viewBox="0 0 10 10" refX="10" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse">
                        <path d="M 0 0 L 10 5 L 0 10 z" class="arrowhead" />
                    </marker>
                </defs>
                <g class="edges">{ edges }</g>
                <g class="nodes">{ nodes }</g>
            </svg>
            <div class="zoom" role="group" aria-label="Diagram zoom">
                <button type="button" onclick={zoom_by(1.4)} aria-label="Zoom in" title="Zoom in">{"+"}</button>
                <button type="button" onclick={zoom_by(1.0 / 1.4)} aria-label="Zoom out" title="Zoom out">{"−"}</button>
                <button type="button" onclick={reset} aria-label="Show all of the diagram" title="Show the whole diagram">{"all"}</button>
            </div>
            if props.full_truncated {
                <p class="note">{"Full order: only the first comparable pairs are drawn."}</p>
            }
        </div>
    }
}
