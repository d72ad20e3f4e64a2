//! The heatmap of `R(l)` at the real context, downsampled: each display row is one query of the
//! visible range (its row asked of the engine), each display cell shaded by the share of its key
//! range inside that row (the store's `ModelOutcome::heatmap`). A slider picks the layer; the
//! wheel or the buttons zoom, which asks for a new run with the rows of the narrower range.

use std::rc::Rc;

use hasseflow_core::report::percent;
use hasseflow_render::heat_colour as shade;
use wasm_bindgen::{Clamped, JsCast};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};
use yew::prelude::*;

use super::super::form::{input_value, on_click};
use super::super::palette::{Palette, Theme, css, swatch};
use crate::state::{HeatView, ModelOutcome, ModelsAction};

/// Heatmap properties.
#[derive(Properties, Clone)]
pub struct HeatmapProps {
    /// The run (its key's view is the range drawn).
    pub outcome: Rc<ModelOutcome>,
    /// The range the user asked for (differs from the outcome's while new rows are computed).
    pub view: HeatView,
    /// Layer shown, 1-based.
    pub layer: usize,
    /// Light or dark.
    pub theme: Theme,
    /// Whether rows for `view` are being computed.
    pub pending: bool,
    /// The Models view's layer and zoom.
    pub on_models: Callback<ModelsAction>,
}

impl PartialEq for HeatmapProps {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.outcome, &o.outcome)
            && (self.view, self.layer, self.theme, self.pending) == (o.view, o.layer, o.theme, o.pending)
    }
}

/// `n` with thin spaces between thousands.
pub fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push('\u{2009}');
        }
        out.push(c);
    }
    out
}

/// The heatmap with its layer slider, zoom controls and exact counts.
#[function_component(Heatmap)]
pub fn heatmap(p: &HeatmapProps) -> Html {
    let canvas = use_node_ref();
    let hover = use_state(|| None::<(usize, usize)>);
    let o = &p.outcome;
    let report = &o.run.report;
    let depth = report.layers.len().max(1);
    let layer = p.layer.clamp(1, depth);
    let picture = {
        let o = o.clone();
        use_memo((Rc::as_ptr(&o) as usize, layer), move |_| o.heatmap(layer))
    };
    {
        let (canvas, picture, theme) = (canvas.clone(), picture.clone(), p.theme);
        use_effect_with((Rc::as_ptr(&picture) as usize, theme), move |_| {
            let pal = Palette::of(theme);
            let (rows, cols) = (picture.rows, picture.cols);
            if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
                c.set_width(cols as u32);
                c.set_height(rows as u32);
                let mut rgba = Vec::with_capacity(rows * cols * 4);
                for &f in &picture.fraction {
                    let (r, g, b) = shade(f, &pal);
                    rgba.extend_from_slice(&[r, g, b, 255]);
                }
                if let Some(ctx) =
                    c.get_context("2d").ok().flatten().and_then(|x| x.dyn_into::<CanvasRenderingContext2d>().ok())
                    && let Ok(img) =
                        web_sys::ImageData::new_with_u8_clamped_array_and_sh(Clamped(&rgba), cols as u32, rows as u32)
                {
                    let _ = ctx.put_image_data(&img, 0.0, 0.0);
                }
            }
        });
    }
    // Fractions of the drawn range under the pointer.
    let at = |e: &MouseEvent| -> Option<(f64, f64)> {
        let el = e.target()?.dyn_into::<web_sys::Element>().ok()?;
        let (w, h) = (f64::from(el.client_width()).max(1.0), f64::from(el.client_height()).max(1.0));
        Some(((f64::from(e.offset_y()) / h).clamp(0.0, 1.0), (f64::from(e.offset_x()) / w).clamp(0.0, 1.0)))
    };
    let onwheel = {
        let d = p.on_models.clone();
        Callback::from(move |e: WheelEvent| {
            e.prevent_default();
            if let Some((fq, fk)) = at(&e) {
                d.emit(ModelsAction::Zoom { factor: if e.delta_y() < 0.0 { 2.0 } else { 0.5 }, fq, fk });
            }
        })
    };
    let onmousemove = {
        let (hover, rows, cols) = (hover.clone(), picture.rows, picture.cols);
        Callback::from(move |e: MouseEvent| {
            if let Some((fq, fk)) = at(&e) {
                let r = ((fq * rows as f64) as usize).min(rows.saturating_sub(1));
                let c = ((fk * cols as f64) as usize).min(cols.saturating_sub(1));
                hover.set(Some((r, c)));
            }
        })
    };
    let onmouseleave = {
        let hover = hover.clone();
        Callback::from(move |_: MouseEvent| hover.set(None))
    };
    let zoom = |factor: f64| on_click(&p.on_models, ModelsAction::Zoom { factor, fq: 0.5, fk: 0.5 });
    let whole = on_click(&p.on_models, ModelsAction::ResetZoom);
    let on_layer = {
        let d = p.on_models.clone();
        Callback::from(move |e: InputEvent| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            d.emit(ModelsAction::SetLayer(el.value().parse().unwrap_or(1)));
        })
    };
    let on_layer_change = {
        let d = p.on_models.clone();
        Callback::from(move |e: Event| d.emit(ModelsAction::SetLayer(input_value(&e).parse().unwrap_or(1))))
    };
    let v = o.key.view;
    let l = &report.layers[layer - 1];
    let limit = report.limit_cells.max(1);
    let hover_text = match *hover {
        Some((r, c)) if r < picture.rows && c < picture.cols => {
            let q = v.queries()[r];
            let (a, b) = v.col_keys(c);
            let f = picture.fraction[r * picture.cols + c];
            format!("query {q}, keys {a}–{}: {:.0}% of them in R({layer})[{q}]", b - 1, 100.0 * f)
        }
        _ => "Hover the map: each row is one query, each cell the share of its keys that query reaches.".into(),
    };
    let pal = Palette::of(p.theme);
    html! {
        <section class="panel heat" aria-label="Reach heatmap">
            <div class="toolrow">
                <label for="model-layer">{ format!("Layer l = {layer} of {depth}") }</label>
                <input id="model-layer" type="range" min="1" max={depth.to_string()} value={layer.to_string()}
                    oninput={on_layer} onchange={on_layer_change} />
            </div>
            <p class="counts" id="model-counts" data-layer={layer.to_string()} data-cells={l.cells.to_string()}>
                <strong>{ format!("|R({layer})| = {}", grouped(l.cells)) }</strong>
                { format!(" cells, {} of the limit ({}) · {} · lookback min {} / median {} / max {}",
                    percent(l.cells, limit, 4), grouped(report.limit_cells), l.label,
                    grouped(l.lookback.min), grouped(l.lookback.median), grouped(l.lookback.max)) }
            </p>
            <div class="heat-wrap">
                <span class="axis-label q">{ format!("queries {}–{} ↓", v.q0, v.q1) }</span>
                <canvas id="model-heat" ref={canvas} class={classes!(p.pending.then_some("stale"))}
                    aria-label={format!("R({layer}) of queries {}–{} over keys {}–{}, {} x {} cells, shaded by the share of keys reached",
                        v.q0, v.q1, v.k0, v.k1, picture.rows, picture.cols)}
                    {onwheel} {onmousemove} {onmouseleave} />
                <span class="axis-label k">{ format!("keys {}–{} →", v.k0, v.k1) }</span>
            </div>
            <div class="toolrow">
                <div class="zoom-buttons" role="group" aria-label="Heatmap zoom">
                    <button type="button" id="model-zoom-in" onclick={zoom(2.0)} aria-label="Zoom in">{"+"}</button>
                    <button type="button" id="model-zoom-out" onclick={zoom(0.5)} aria-label="Zoom out">{"−"}</button>
                    <button type="button" id="model-zoom-all" onclick={whole} aria-label="Show all positions">{"all"}</button>
                </div>
                <span class="hint">{ if p.pending { "computing the rows of the new range…".to_string() }
                    else { format!("{} display rows × {} columns", picture.rows, picture.cols) } }</span>
            </div>
            <div class="legend" aria-label="Heatmap legend">
                { swatch(pal.empty, "no key reached".into()) }
                <span class="swatch-item">
                    <svg width="96" height="12" aria-hidden="true">
                        { for (0..8).map(|i| html! { <rect x={(i * 12).to_string()} width="12" height="12"
                            fill={css(shade((i as f32 + 1.0) / 8.0, &pal))} /> }) }
                    </svg>
                    {"share of the cell's keys reached: low … all"}
                </span>
            </div>
            <p class="hint" id="model-heat-hover" aria-live="polite">{ hover_text }</p>
        </section>
    }
}
