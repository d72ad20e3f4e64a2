//! The mask grid: a canvas showing `R(L)` coloured by first-reach layer, with rulers, zoom and
//! pan, and pointer painting. What it shows is the store's pure picture
//! ([`crate::state::GridFrame`]); this file handles the pointer and paints the picture:
//! the cells as one `n x n` image scaled up (one `putImageData` per frame, so `n = 512` stays
//! smooth), the overlays as a few rectangles.

use std::cell::RefCell;
use std::rc::Rc;

use hasseflow_core::BitMatrix;
use hasseflow_core::interop::BlockStats;
use wasm_bindgen::{Clamped, JsCast};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};
use yew::prelude::*;

use super::palette::{Palette, Rgb, Theme};
use crate::state::{
    CANVAS_PX, Derived, Gesture, GridCells, GridFrame, GridInput, GridView as View, KeyStep, Pointer, RULER, Reaction,
    Rect, Shade, StrokeStep, Strokes, grid_key,
};

/// Grid properties. Equality is by revision and pointers, so the canvas redraws only when
/// something it shows changed.
#[derive(Properties, Clone)]
pub struct GridProps {
    /// The mask.
    pub mask: Rc<BitMatrix>,
    /// Its analysis.
    pub derived: Rc<Derived>,
    /// Position labels (drawn as canvas text on the rulers).
    pub labels: Option<Rc<Vec<String>>>,
    /// Revision of the mask.
    pub revision: u64,
    /// The layer shown.
    pub layer: usize,
    /// Hovered cell.
    pub hover: Option<(usize, usize)>,
    /// Hovered class in the order view.
    pub hover_class: Option<usize>,
    /// Colour theme.
    pub theme: Theme,
    /// Pointer down on a cell.
    pub on_stroke_start: Callback<(usize, usize)>,
    /// Pointer dragged onto a cell.
    pub on_stroke_move: Callback<(usize, usize)>,
    /// Pointer released.
    pub on_stroke_end: Callback<()>,
    /// The stroke is abandoned (a second finger came down to pinch).
    pub on_stroke_cancel: Callback<()>,
    /// Hover changed.
    pub on_hover: Callback<Option<(usize, usize)>>,
    /// Where the canvas element is (the shell exports it as PNG).
    pub canvas_ref: NodeRef,
    /// Block statistics to overlay as tiles (`None`: no overlay).
    #[prop_or_default]
    pub blocks: Option<Rc<BlockStats>>,
}

impl PartialEq for GridProps {
    fn eq(&self, o: &Self) -> bool {
        self.revision == o.revision
            && Rc::ptr_eq(&self.derived, &o.derived)
            && self.layer == o.layer
            && self.hover == o.hover
            && self.hover_class == o.hover_class
            && self.theme == o.theme
            && self.canvas_ref == o.canvas_ref
            && match (&self.blocks, &o.blocks) {
                (None, None) => true,
                (Some(a), Some(b)) => Rc::ptr_eq(a, b),
                _ => false,
            }
    }
}

/// The pointer in the grid's own coordinates (`0..CANVAS_PX`): the canvas' content box is
/// narrower than `CANVAS_PX` by its border, and the browser scales the drawing into it.
fn offset(e: &MouseEvent) -> (f64, f64) {
    let scale = e
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .map(|el| el.client_width())
        .filter(|&w| w > 0)
        .map_or(1.0, |w| CANVAS_PX / f64::from(w));
    (f64::from(e.offset_x()) * scale, f64::from(e.offset_y()) * scale)
}

/// A pointer event as the gesture machine reads it.
fn pointer(e: &PointerEvent) -> Pointer {
    Pointer {
        id: e.pointer_id(),
        touch: e.pointer_type() == "touch",
        button: e.button(),
        pan_key: e.alt_key() || e.shift_key(),
        at: offset(e),
    }
}

/// Carries out what the gesture machine asks for.
fn react(e: &PointerEvent, r: Reaction, view: &UseStateHandle<View>, p: &GridProps) {
    if r.prevent_default {
        e.prevent_default();
    }
    if let Some(v) = r.view {
        view.set(v);
    }
    if let Some(h) = r.hover {
        p.on_hover.emit(h);
    }
    match r.stroke {
        Some(StrokeStep::Start(c)) => p.on_stroke_start.emit(c),
        Some(StrokeStep::Move(c)) => p.on_stroke_move.emit(c),
        Some(StrokeStep::End) => p.on_stroke_end.emit(()),
        Some(StrokeStep::Cancel) => p.on_stroke_cancel.emit(()),
        None => {}
    }
}

/// The grid component.
#[function_component(Grid)]
pub fn grid(props: &GridProps) -> Html {
    let view = use_state(|| View::HOME);
    let drag = use_mut_ref(Gesture::default);
    let scratch = use_mut_ref(|| None::<(CellsKey, HtmlCanvasElement)>);
    let n = props.mask.n();

    // Reset the view when the size changes.
    {
        let view = view.clone();
        use_effect_with(n, move |_| view.set(View::HOME));
    }

    // Draw.
    {
        let p = props.clone();
        let v = *view;
        let scratch = scratch.clone();
        use_effect_with((props.clone(), v), move |_| {
            let start = super::io::now();
            draw(&p, v, &scratch);
            // Exposed for measurement (the e2e tests read it), not shown.
            if let Some(c) = p.canvas_ref.cast::<web_sys::Element>() {
                let _ = c.set_attribute("data-draw-ms", &format!("{:.1}", super::io::now() - start));
            }
        });
    }

    let onpointerdown = {
        let (view, drag, p) = (view.clone(), drag.clone(), props.clone());
        Callback::from(move |e: PointerEvent| {
            if let Some(t) = e.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) {
                let _ = t.set_pointer_capture(e.pointer_id());
            }
            let r = drag.borrow_mut().down(pointer(&e), *view, n);
            react(&e, r, &view, &p);
        })
    };
    let onpointermove = {
        let (view, drag, p) = (view.clone(), drag.clone(), props.clone());
        Callback::from(move |e: PointerEvent| {
            let r = drag.borrow_mut().moved(pointer(&e), *view, n, p.hover);
            react(&e, r, &view, &p);
        })
    };
    let end = {
        let (view, drag, p) = (view.clone(), drag.clone(), props.clone());
        Callback::from(move |e: PointerEvent| {
            let r = drag.borrow_mut().up(e.pointer_id());
            react(&e, r, &view, &p);
        })
    };
    let onpointerleave = {
        let p = props.clone();
        Callback::from(move |_: PointerEvent| p.on_hover.emit(None))
    };
    let onwheel = {
        let view = view.clone();
        Callback::from(move |e: WheelEvent| {
            e.prevent_default();
            let (x, y) = offset(&e);
            let factor = if e.delta_y() < 0.0 { 1.25 } else { 0.8 };
            // Keep the point under the cursor fixed.
            view.set(view.zoomed_at((x, y), factor, n));
        })
    };
    let onkeydown = {
        let p = props.clone();
        Callback::from(move |e: KeyboardEvent| {
            let Some(step) = grid_key(&e.key(), p.hover, n) else { return };
            e.prevent_default();
            e.stop_propagation();
            match step {
                KeyStep::Hover(c) => p.on_hover.emit(Some(c)),
                KeyStep::Paint(c) => {
                    p.on_stroke_start.emit(c);
                    p.on_stroke_end.emit(());
                }
            }
        })
    };
    let zoom_by = |f: f64| {
        let view = view.clone();
        Callback::from(move |_: MouseEvent| view.set(view.zoomed(f, n)))
    };
    let reset = {
        let view = view.clone();
        Callback::from(move |_: MouseEvent| view.set(View::HOME))
    };
    let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio()).max(1.0);
    let px = (CANVAS_PX * dpr).round() as u32;
    html! {
        <div class="grid-wrap">
            <canvas id="grid" ref={props.canvas_ref.clone()} width={px.to_string()} height={px.to_string()}
                data-zoom={format!("{:.3}", view.zoom)}
                tabindex="0" role="img"
                aria-label="Mask grid: row q reads column k. Drag to paint; arrow keys move the cursor, Space paints; wheel or two-finger pinch zooms, Shift+drag pans."
                {onpointerdown} {onpointermove} onpointerup={end.clone()} onpointercancel={end}
                {onpointerleave} {onwheel} {onkeydown} />
            <div class="zoom" role="group" aria-label="Zoom">
                <button type="button" onclick={zoom_by(1.5)} title="Zoom in" aria-label="Zoom in">{"+"}</button>
                <button type="button" onclick={zoom_by(1.0 / 1.5)} title="Zoom out" aria-label="Zoom out">{"−"}</button>
                <button type="button" onclick={reset} title="Fit the whole grid" aria-label="Fit">{"fit"}</button>
            </div>
        </div>
    }
}

/// What the cell image depends on: hovering, zooming and panning reuse it.
type CellsKey = (u64, usize, Theme);

/// The 2D context of a canvas.
fn context(canvas: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    canvas.get_context("2d").ok().flatten().and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
}

/// Paints the grid's picture: the cell image (recomputed only when the mask, the layer or the
/// theme changed), then the frame over it.
fn draw(p: &GridProps, v: View, scratch: &Rc<RefCell<Option<(CellsKey, HtmlCanvasElement)>>>) {
    let Some(canvas) = p.canvas_ref.cast::<HtmlCanvasElement>() else { return };
    let Some(ctx) = context(&canvas) else { return };
    let pal = Palette::of(p.theme);
    let input = GridInput {
        mask: &p.mask,
        derived: &p.derived,
        layer: p.layer,
        labels: p.labels.as_deref().map(Vec::as_slice),
        hover: p.hover,
        hover_class: p.hover_class,
        blocks: p.blocks.as_deref(),
    };
    let n = p.mask.n();
    let key = (p.revision, p.layer, p.theme);
    let mut slot = scratch.borrow_mut();
    if slot.as_ref().is_none_or(|(k, c)| *k != key || c.width() as usize != n) {
        let reuse = slot.take().map(|(_, c)| c).filter(|c| c.width() as usize == n);
        let Some(off) = reuse.or_else(|| offscreen(n)) else { return };
        paint_cells(&off, &GridCells::new(&input), p.layer, &pal);
        *slot = Some((key, off));
    }
    let Some((_, off)) = slot.as_ref() else { return };
    let scale = f64::from(canvas.width()) / CANVAS_PX;
    let _ = ctx.set_transform(scale, 0.0, 0.0, scale, 0.0, 0.0);
    paint_frame(&ctx, off, &GridFrame::new(&input, v), &pal, p.hover_class.is_some());
}

/// A new `n x n` canvas, not in the page.
fn offscreen(n: usize) -> Option<HtmlCanvasElement> {
    let c = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.create_element("canvas").ok())
        .and_then(|c| c.dyn_into::<HtmlCanvasElement>().ok())?;
    c.set_width(n as u32);
    c.set_height(n as u32);
    Some(c)
}

/// One pixel per cell, each shade's colour looked up rather than interpolated per cell.
fn paint_cells(off: &HtmlCanvasElement, cells: &GridCells, layer: usize, pal: &Palette) {
    let n = cells.n;
    let lut: Vec<Rgb> = (0..=cells.depth.min(layer)).map(|d| pal.layer_colour(d, cells.depth)).collect();
    let mut rgba = vec![0u8; n * n * 4];
    for (px, shade) in rgba.chunks_exact_mut(4).zip(&cells.shades) {
        let c = match *shade {
            Shade::Layer(d) => lut.get(d).copied().unwrap_or(pal.empty),
            Shade::New => pal.new_cell,
            Shade::Pending => pal.pending,
            Shade::Empty => pal.empty,
        };
        px.copy_from_slice(&[c.0, c.1, c.2, 255]);
    }
    if let Some(octx) = context(off)
        && let Ok(img) = web_sys::ImageData::new_with_u8_clamped_array_and_sh(Clamped(&rgba), n as u32, n as u32)
    {
        let _ = octx.put_image_data(&img, 0.0, 0.0);
    }
}

fn fill(ctx: &CanvasRenderingContext2d, r: &Rect) {
    ctx.fill_rect(r.x, r.y, r.w, r.h);
}

fn stroke(ctx: &CanvasRenderingContext2d, css: &str, lines: &Strokes) {
    ctx.set_stroke_style_str(css);
    ctx.set_line_width(lines.width);
    ctx.begin_path();
    for l in &lines.segments {
        ctx.move_to(l.from.0, l.from.1);
        ctx.line_to(l.to.0, l.to.1);
    }
    ctx.stroke();
}

/// The background, the cell image and the frame's overlays, rulers and labels.
fn paint_frame(ctx: &CanvasRenderingContext2d, off: &HtmlCanvasElement, f: &GridFrame, pal: &Palette, class: bool) {
    ctx.set_fill_style_str(pal.background_css);
    ctx.fill_rect(0.0, 0.0, CANVAS_PX, CANVAS_PX);
    ctx.save();
    ctx.begin_path();
    ctx.rect(RULER, RULER, CANVAS_PX - RULER, CANVAS_PX - RULER);
    ctx.clip();
    ctx.set_image_smoothing_enabled(false);
    let _ = ctx.draw_image_with_html_canvas_element_and_dw_and_dh(off, f.origin.0, f.origin.1, f.side, f.side);
    if let Some(b) = &f.borders {
        stroke(ctx, pal.gridline_css, b);
    }
    if let Some(b) = &f.blocks {
        for (r, alpha) in &b.tiles {
            ctx.set_global_alpha(*alpha);
            ctx.set_fill_style_str(pal.accent_css);
            fill(ctx, r);
        }
        ctx.set_global_alpha(1.0);
        stroke(ctx, pal.accent_css, &b.lines);
    }
    if let Some(c) = &f.class {
        ctx.set_fill_style_str(pal.highlight_css);
        c.bands.iter().for_each(|r| fill(ctx, r));
        ctx.set_global_alpha(0.45);
        c.down_set.iter().for_each(|r| fill(ctx, r));
        ctx.set_global_alpha(1.0);
    }
    if let Some(h) = &f.hover {
        ctx.set_fill_style_str(pal.hover_band_css);
        h.bands.iter().for_each(|r| fill(ctx, r));
        ctx.set_stroke_style_str(pal.ink_css);
        ctx.set_line_width(2.0);
        ctx.stroke_rect(h.outline.x, h.outline.y, h.outline.w, h.outline.h);
    }
    ctx.restore();
    ctx.set_fill_style_str(pal.ruler_css);
    ctx.fill_rect(0.0, 0.0, CANVAS_PX, RULER);
    ctx.fill_rect(0.0, 0.0, RULER, CANVAS_PX);
    if class {
        ctx.set_fill_style_str(pal.accent_css);
        f.ruler_marks.iter().for_each(|r| fill(ctx, r));
    }
    ctx.set_fill_style_str(pal.muted_css);
    ctx.set_font("10px system-ui, sans-serif");
    ctx.set_text_align("center");
    ctx.set_text_baseline("middle");
    for l in &f.labels {
        ctx.set_fill_style_str(if l.hot { pal.ink_css } else { pal.muted_css });
        let _ = ctx.fill_text(&l.text, l.x, l.y);
    }
    ctx.set_fill_style_str(pal.muted_css);
    ctx.set_font("9px system-ui, sans-serif");
    let _ = ctx.fill_text("q\\k", RULER / 2.0, RULER / 2.0 - 2.0);
}
