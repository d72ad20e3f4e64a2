//! The order view: the Hasse diagram (or the full order) of the limit, drawn as SVG elements
//! from the store's pure picture ([`crate::state::OrderPicture`]; captions are text nodes,
//! never injected markup), with zoom and pan.

use std::rc::Rc;

use hasseflow_render::Scene;
use yew::prelude::*;

use crate::state::{ORDER_H as H, ORDER_W as W, OrderEdge, OrderNode, OrderPicture, OrderView, ViewBox};

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

/// The order view component.
#[function_component(OrderDiagram)]
pub fn order_diagram(props: &OrderProps) -> Html {
    let scene = &props.scene;
    // The whole diagram, centred (never magnified past 1.5). It is shown on load and after every
    // change of the scene, unless the user has zoomed or panned since: then their view stays,
    // until "all" fits the diagram again.
    let whole = ViewBox::whole(scene);
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
            let f = if e.delta_y() < 0.0 { 1.25 } else { 0.8 };
            vb.set(vb.zoomed_at((f64::from(e.offset_x()), f64::from(e.offset_y())), f));
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
                vb.set(v0.dragged((dx, dy)));
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
            vb.set(vb.zoomed(f));
        })
    };
    let reset = {
        let (vb, user_moved) = (vb.clone(), user_moved.clone());
        Callback::from(move |_: MouseEvent| {
            *user_moved.borrow_mut() = false;
            vb.set(whole);
        })
    };

    let picture = OrderPicture::new(scene, props.view, &props.full_edges, &props.lit, props.hover_class);
    let edges: Html = picture.edges.iter().map(edge).collect();
    let nodes: Html = picture.nodes.into_iter().map(|n| node(n, &props.on_hover_class)).collect();
    html! {
        <div class="order-wrap">
            <svg id="hasse" class="order" width={W.to_string()} height={H.to_string()} viewBox={vb.attr()}
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

/// An edge as an SVG path.
fn edge(e: &OrderEdge) -> Html {
    let class = classes!("edge", e.full.then_some("full"), e.lit.then_some("lit"), e.dim.then_some("dim"));
    html! { <path class={class} d={e.d.clone()} marker-end="url(#arrowhead)" /> }
}

/// A class as a focusable box with its caption; hovering or focusing it reports the class.
fn node(n: OrderNode, on_hover_class: &Callback<Option<usize>>) -> Html {
    let c = n.class;
    let class = classes!("node", n.lit.then_some("lit"), n.hovered.then_some("hovered"), n.dim.then_some("dim"));
    let to = |v: Option<usize>| on_hover_class.reform(move |_: PointerEvent| v);
    let focus = |v: Option<usize>| on_hover_class.reform(move |_: FocusEvent| v);
    let r = n.rect;
    html! {
        <g class={class} data-class={c.to_string()} tabindex="0" role="listitem" aria-label={n.title.clone()}
            onpointerenter={to(Some(c))} onpointerleave={to(None)} onfocus={focus(Some(c))} onblur={focus(None)}>
            <title>{ n.title }</title>
            <rect x={format!("{:.1}", r.x)} y={format!("{:.1}", r.y)}
                width={format!("{:.1}", r.w)} height={format!("{:.1}", r.h)} rx="5" />
            <text x={format!("{:.1}", n.centre.0)} y={format!("{:.1}", n.centre.1)} text-anchor="middle" dominant-baseline="central">
                { n.caption }
            </text>
        </g>
    }
}
