//! The mask grid: a canvas showing `R(L)` coloured by first-reach layer, with rulers, zoom and
//! pan, and pointer painting. Cells are drawn as one `n x n` image scaled up (one `putImageData`
//! per frame, so `n = 512` stays smooth); overlays (hover, class highlight) are a few rectangles.

use std::cell::RefCell;
use std::rc::Rc;

use hasseflow_core::BitMatrix;
use hasseflow_core::interop::{BlockStats, Tile};
use wasm_bindgen::{Clamped, JsCast};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};
use yew::prelude::*;

use super::palette::{self, Palette, Theme};
use crate::state::Derived;

/// CSS size of the canvas (square).
pub const CANVAS_PX: f64 = 520.0;
/// Width of the rulers.
const RULER: f64 = 30.0;

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

/// Zoom and pan of the grid (component-local view state: nothing else needs it).
#[derive(Clone, Copy, PartialEq, Debug)]
struct View {
    zoom: f64,
    pan: (f64, f64),
}

impl View {
    const HOME: View = View { zoom: 1.0, pan: (0.0, 0.0) };
    fn cell(&self, n: usize) -> f64 {
        (CANVAS_PX - RULER) / n as f64 * self.zoom
    }
    /// The cell under canvas point `(x, y)` (CSS pixels).
    fn cell_at(&self, n: usize, x: f64, y: f64) -> Option<(usize, usize)> {
        let s = self.cell(n);
        let k = ((x - RULER - self.pan.0) / s).floor();
        let q = ((y - RULER - self.pan.1) / s).floor();
        (x >= RULER && y >= RULER && k >= 0.0 && q >= 0.0 && (k as usize) < n && (q as usize) < n)
            .then_some((q as usize, k as usize))
    }
    fn clamped(self, n: usize) -> View {
        let zoom = self.zoom.clamp(1.0, (n as f64 / 4.0).max(1.0) * 2.0);
        let span = (CANVAS_PX - RULER) * zoom;
        let min = (CANVAS_PX - RULER) - span;
        View { zoom, pan: (self.pan.0.clamp(min, 0.0), self.pan.1.clamp(min, 0.0)) }
    }
}

#[derive(Default)]
struct Drag {
    painting: bool,
    panning: Option<(f64, f64, View)>,
    last: Option<(usize, usize)>,
    /// Touch points down on the grid: pointer id and position.
    touches: Vec<(i32, f64, f64)>,
    /// A two-finger pinch: the fingers' distance and midpoint when it began, and the view then.
    pinch: Option<(f64, (f64, f64), View)>,
}

impl Drag {
    /// Distance and midpoint of the first two touch points.
    fn spread(&self) -> Option<(f64, (f64, f64))> {
        let [(_, x0, y0), (_, x1, y1), ..] = self.touches[..] else { return None };
        Some(((x1 - x0).hypot(y1 - y0).max(1.0), ((x0 + x1) / 2.0, (y0 + y1) / 2.0)))
    }
}

impl View {
    /// The view after a pinch from `(d0, mid0)` at `start` to `(d, mid)`: zoom by `d / d0`, and
    /// the grid point that was under `mid0` follows the fingers to `mid`.
    fn pinched(start: View, (d0, mid0): (f64, (f64, f64)), (d, mid): (f64, (f64, f64)), n: usize) -> View {
        let zoom = start.zoom * d / d0;
        let z = View { zoom, pan: (0.0, 0.0) }.clamped(n).zoom;
        let follow = |m0: f64, m: f64, pan0: f64| {
            let u = (m0 - RULER - pan0) / start.zoom;
            m - RULER - u * z
        };
        View { zoom: z, pan: (follow(mid0.0, mid.0, start.pan.0), follow(mid0.1, mid.1, start.pan.1)) }.clamped(n)
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

/// The grid component.
#[function_component(Grid)]
pub fn grid(props: &GridProps) -> Html {
    let view = use_state(|| View::HOME);
    let drag = use_mut_ref(Drag::default);
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
            let (x, y) = offset(&e);
            if let Some(t) = e.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) {
                let _ = t.set_pointer_capture(e.pointer_id());
            }
            let mut d = drag.borrow_mut();
            if e.pointer_type() == "touch" {
                d.touches.retain(|t| t.0 != e.pointer_id());
                d.touches.push((e.pointer_id(), x, y));
                if let Some(spread) = d.spread() {
                    // A second finger: pinch-zoom, and the first finger's stroke never happened.
                    e.prevent_default();
                    if d.painting {
                        d.painting = false;
                        d.last = None;
                        p.on_stroke_cancel.emit(());
                    }
                    d.pinch = Some((spread.0, spread.1, *view));
                    return;
                }
            }
            if e.button() == 1 || (e.button() == 0 && (e.alt_key() || e.shift_key())) {
                e.prevent_default();
                d.panning = Some((x, y, *view));
            } else if e.button() == 0
                && let Some(c) = view.cell_at(n, x, y)
            {
                e.prevent_default();
                d.painting = true;
                d.last = Some(c);
                p.on_stroke_start.emit(c);
            }
        })
    };
    let onpointermove = {
        let (view, drag, p) = (view.clone(), drag.clone(), props.clone());
        Callback::from(move |e: PointerEvent| {
            let (x, y) = offset(&e);
            let mut d = drag.borrow_mut();
            if let Some(t) = d.touches.iter_mut().find(|t| t.0 == e.pointer_id()) {
                (t.1, t.2) = (x, y);
            }
            if let Some((d0, mid0, v0)) = d.pinch {
                if let Some(now) = d.spread() {
                    view.set(View::pinched(v0, (d0, mid0), now, n));
                }
                return;
            }
            if let Some((x0, y0, v0)) = d.panning {
                view.set(View { zoom: v0.zoom, pan: (v0.pan.0 + x - x0, v0.pan.1 + y - y0) }.clamped(n));
                return;
            }
            let c = view.cell_at(n, x, y);
            if c != p.hover {
                p.on_hover.emit(c);
            }
            if d.painting
                && let Some(c) = c
                && d.last != Some(c)
            {
                d.last = Some(c);
                p.on_stroke_move.emit(c);
            }
        })
    };
    let end = {
        let (drag, p) = (drag.clone(), props.clone());
        Callback::from(move |e: PointerEvent| {
            let mut d = drag.borrow_mut();
            d.touches.retain(|t| t.0 != e.pointer_id());
            if d.pinch.is_some() {
                // The pinch ends when a finger lifts; the other finger does not start painting.
                if d.touches.is_empty() {
                    d.pinch = None;
                }
                return;
            }
            d.panning = None;
            if d.painting {
                d.painting = false;
                d.last = None;
                p.on_stroke_end.emit(());
            }
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
            let v = *view;
            let zoom = v.zoom * factor;
            // Keep the point under the cursor fixed.
            let (gx, gy) = (x - RULER, y - RULER);
            let pan = (gx - (gx - v.pan.0) * zoom / v.zoom, gy - (gy - v.pan.1) * zoom / v.zoom);
            view.set(View { zoom, pan }.clamped(n));
        })
    };
    let onkeydown = {
        let p = props.clone();
        Callback::from(move |e: KeyboardEvent| {
            let (q, k) = p.hover.unwrap_or((0, 0));
            let moved = match e.key().as_str() {
                "ArrowUp" => Some((q.saturating_sub(1), k)),
                "ArrowDown" => Some(((q + 1).min(n - 1), k)),
                "ArrowLeft" => Some((q, k.saturating_sub(1))),
                "ArrowRight" => Some((q, (k + 1).min(n - 1))),
                " " | "Enter" => {
                    p.on_stroke_start.emit((q, k));
                    p.on_stroke_end.emit(());
                    None
                }
                _ => return,
            };
            e.prevent_default();
            e.stop_propagation();
            if let Some(c) = moved {
                p.on_hover.emit(Some(c));
            }
        })
    };
    let zoom_by = |f: f64| {
        let view = view.clone();
        Callback::from(move |_: MouseEvent| {
            let v = *view;
            let c = (CANVAS_PX - RULER) / 2.0;
            let zoom = v.zoom * f;
            view.set(
                View { zoom, pan: (c - (c - v.pan.0) * zoom / v.zoom, c - (c - v.pan.1) * zoom / v.zoom) }.clamped(n),
            );
        })
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

fn draw(p: &GridProps, v: View, scratch: &Rc<RefCell<Option<(CellsKey, HtmlCanvasElement)>>>) {
    let Some(canvas) = p.canvas_ref.cast::<HtmlCanvasElement>() else { return };
    let Some(ctx) = canvas.get_context("2d").ok().flatten().and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
    else {
        return;
    };
    let pal = Palette::of(p.theme);
    let n = p.mask.n();
    let depth = p.derived.analysis.depth();
    let fr = &p.derived.first_reach;
    let layer = p.layer;

    // One pixel per cell, recomputed only when the mask, the layer or the theme changed.
    let key = (p.revision, layer, p.theme);
    let mut slot = scratch.borrow_mut();
    if slot.as_ref().is_none_or(|(k, c)| *k != key || c.width() as usize != n) {
        // Colour by first-reach layer, looked up rather than interpolated per cell.
        let lut: Vec<palette::Rgb> = (0..=depth.min(layer))
            .map(|d| if d == layer && layer > 0 { pal.new_cell } else { pal.layer_colour(d, depth) })
            .collect();
        let mut rgba = vec![0u8; n * n * 4];
        for q in 0..n {
            for k in 0..n {
                let c = match fr.get(q, k) {
                    Some(d) if d <= layer => lut[d],
                    _ if p.mask.get(q, k) => pal.pending,
                    _ => pal.empty,
                };
                let i = (q * n + k) * 4;
                rgba[i..i + 4].copy_from_slice(&[c.0, c.1, c.2, 255]);
            }
        }
        let reuse = slot.take().map(|(_, c)| c).filter(|c| c.width() as usize == n);
        let off = reuse.or_else(|| {
            let c = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.create_element("canvas").ok())
                .and_then(|c| c.dyn_into::<HtmlCanvasElement>().ok())?;
            c.set_width(n as u32);
            c.set_height(n as u32);
            Some(c)
        });
        let Some(off) = off else { return };
        if let Some(octx) =
            off.get_context("2d").ok().flatten().and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
            && let Ok(img) = web_sys::ImageData::new_with_u8_clamped_array_and_sh(Clamped(&rgba), n as u32, n as u32)
        {
            let _ = octx.put_image_data(&img, 0.0, 0.0);
        }
        *slot = Some((key, off));
    }
    let Some((_, off)) = slot.as_ref() else { return };

    let scale = f64::from(canvas.width()) / CANVAS_PX;
    let _ = ctx.set_transform(scale, 0.0, 0.0, scale, 0.0, 0.0);
    ctx.set_fill_style_str(pal.background_css);
    ctx.fill_rect(0.0, 0.0, CANVAS_PX, CANVAS_PX);

    let s = v.cell(n);
    let (ox, oy) = (RULER + v.pan.0, RULER + v.pan.1);
    ctx.save();
    ctx.begin_path();
    ctx.rect(RULER, RULER, CANVAS_PX - RULER, CANVAS_PX - RULER);
    ctx.clip();
    ctx.set_image_smoothing_enabled(false);
    let _ = ctx.draw_image_with_html_canvas_element_and_dw_and_dh(off, ox, oy, s * n as f64, s * n as f64);

    // Cell borders when cells are big enough to read them.
    if s >= 7.0 {
        ctx.set_stroke_style_str(pal.gridline_css);
        ctx.set_line_width(if s >= 16.0 { 1.0 } else { 0.5 });
        ctx.begin_path();
        for i in 0..=n {
            let t = i as f64 * s;
            ctx.move_to(ox + t, oy);
            ctx.line_to(ox + t, oy + s * n as f64);
            ctx.move_to(ox, oy + t);
            ctx.line_to(ox + s * n as f64, oy + t);
        }
        ctx.stroke();
    }

    // Block-sparsity tiles: full tiles shaded, partial ones lighter, empty ones left clear.
    if let Some(b) = p.blocks.as_ref().filter(|b| b.block_size > 0) {
        let t = b.block_size as f64 * s;
        for (bq, row) in b.grid.iter().enumerate() {
            for (bk, tile) in row.iter().enumerate() {
                let alpha = match tile {
                    Tile::Full => 0.35,
                    Tile::Partial => 0.15,
                    Tile::Empty => continue,
                };
                ctx.set_global_alpha(alpha);
                ctx.set_fill_style_str(pal.accent_css);
                let (x, y) = (ox + bk as f64 * t, oy + bq as f64 * t);
                ctx.fill_rect(x, y, t.min(s * n as f64 - bk as f64 * t), t.min(s * n as f64 - bq as f64 * t));
            }
        }
        ctx.set_global_alpha(1.0);
        ctx.set_stroke_style_str(pal.accent_css);
        ctx.set_line_width(1.5);
        ctx.begin_path();
        for i in 0..=b.blocks {
            let d = (i as f64 * t).min(s * n as f64);
            ctx.move_to(ox + d, oy);
            ctx.line_to(ox + d, oy + s * n as f64);
            ctx.move_to(ox, oy + d);
            ctx.line_to(ox + s * n as f64, oy + d);
        }
        ctx.stroke();
    }

    // Hovered class: its members' rows and columns.
    let a = &p.derived.analysis;
    let mut downset = vec![false; n];
    if let Some(c) = p.hover_class.filter(|&c| c < a.classes().len()) {
        ctx.set_fill_style_str(pal.highlight_css);
        for &m in &a.classes()[c] {
            ctx.fill_rect(ox, oy + m as f64 * s, s * n as f64, s);
            ctx.fill_rect(ox + m as f64 * s, oy, s, s * n as f64);
        }
        let seen = a.down_set(c);
        for &k in &seen {
            downset[k] = true;
        }
        // The down-set (everything the class sees), fainter, on the key axis.
        ctx.set_global_alpha(0.45);
        for &k in seen.iter().filter(|&&k| a.class_of()[k] != c) {
            ctx.fill_rect(ox + k as f64 * s, oy, s, s * n as f64);
        }
        ctx.set_global_alpha(1.0);
    }
    // Hovered cell: its row and column, and an outline.
    if let Some((q, k)) = p.hover {
        ctx.set_fill_style_str(pal.hover_band_css);
        ctx.fill_rect(ox, oy + q as f64 * s, s * n as f64, s);
        ctx.fill_rect(ox + k as f64 * s, oy, s, s * n as f64);
        ctx.set_stroke_style_str(pal.ink_css);
        ctx.set_line_width(2.0);
        ctx.stroke_rect(ox + k as f64 * s, oy + q as f64 * s, s.max(2.0), s.max(2.0));
    }
    ctx.restore();

    // Rulers: indices at a readable spacing; the hovered class's down-set marked on the key ruler.
    ctx.set_fill_style_str(pal.ruler_css);
    ctx.fill_rect(0.0, 0.0, CANVAS_PX, RULER);
    ctx.fill_rect(0.0, 0.0, RULER, CANVAS_PX);
    if p.hover_class.is_some() {
        ctx.set_fill_style_str(pal.accent_css);
        for (k, _) in downset.iter().enumerate().filter(|(_, d)| **d) {
            let x = ox + k as f64 * s;
            if x + s >= RULER && x <= CANVAS_PX {
                ctx.fill_rect(x.max(RULER), RULER - 5.0, s.max(1.0), 5.0);
            }
        }
    }
    let step = [1usize, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, 64, 100, 128, 256]
        .into_iter()
        .find(|&t| t as f64 * s >= 22.0)
        .unwrap_or(256);
    ctx.set_fill_style_str(pal.muted_css);
    ctx.set_font("10px system-ui, sans-serif");
    ctx.set_text_align("center");
    ctx.set_text_baseline("middle");
    // Position labels replace indices where a cell is wide enough to hold a few characters.
    let label = |i: usize| match p.labels.as_ref().and_then(|l| l.get(i)) {
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
    for i in (0..n).step_by(step) {
        let c = i as f64 * s + s / 2.0;
        let (x, y) = (ox + c, oy + c);
        let hot = |axis: usize| p.hover.is_some_and(|h| if axis == 0 { h.1 == i } else { h.0 == i });
        if (RULER..=CANVAS_PX).contains(&x) {
            ctx.set_fill_style_str(if hot(0) { pal.ink_css } else { pal.muted_css });
            let _ = ctx.fill_text(&label(i), x, RULER / 2.0 - 2.0);
        }
        if (RULER..=CANVAS_PX).contains(&y) {
            ctx.set_fill_style_str(if hot(1) { pal.ink_css } else { pal.muted_css });
            let _ = ctx.fill_text(&label(i), RULER / 2.0, y);
        }
    }
    ctx.set_fill_style_str(pal.muted_css);
    ctx.set_font("9px system-ui, sans-serif");
    let _ = ctx.fill_text("q\\k", RULER / 2.0, RULER / 2.0 - 2.0);
}
