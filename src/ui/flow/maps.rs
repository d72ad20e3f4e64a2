//! The Flow view's pictures: both maps painted cell by cell on their canvases, and the legend
//! that reads them.

use wasm_bindgen::{Clamped, JsCast};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};
use yew::prelude::*;

use super::super::palette::{Palette, Rgb, Theme, css, swatch, viridis};
use crate::state::LayerPicture;

/// Canvas pixels per side of each map (at least; CSS scales it to the panel).
pub const MAP_PX: usize = 256;
/// Disagreement marker: a magenta that neither viridis nor the "new" vermillion uses.
const MARK: Rgb = (230, 0, 126);

/// Legend properties.
#[derive(Properties, PartialEq, Clone)]
pub struct LegendProps {
    /// Colour theme.
    pub theme: Theme,
    /// The lowest decade the influence scale shows.
    pub lo: i32,
}

/// The Flow view's legend: the influence ramp, empty cells, `R(L)` and the disagreement mark.
#[function_component(FlowLegend)]
pub fn flow_legend(p: &LegendProps) -> Html {
    let pal = Palette::of(p.theme);
    html! {
        <div class="legend flow-legend" aria-label="Flow legend">
            <span class="swatch-item">
                <svg width="120" height="12" aria-hidden="true">
                    <defs><linearGradient id="flow-ramp">
                        { for (0..=8).map(|i| html! { <stop offset={format!("{}%", i * 100 / 8)} stop-color={css(viridis(f64::from(i) / 8.0))} /> }) }
                    </linearGradient></defs>
                    <rect width="120" height="12" fill="url(#flow-ramp)" />
                </svg>
                { format!("relative influence, log scale: {} … 1", pow10(p.lo)) }
            </span>
            { swatch(pal.empty, "0 (no influence)".into()) }
            { swatch(reach_colour(p.theme), "in R(L)".into()) }
            { swatch(MARK, "measurement ≠ theory".into()) }
        </div>
    }
}

/// `10^e` with a superscript exponent.
fn pow10(e: i32) -> String {
    let sup = |c: char| match c {
        '-' => '⁻',
        d => ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'][d.to_digit(10).unwrap_or(0) as usize],
    };
    format!("10{}", e.to_string().chars().map(sup).collect::<String>())
}

/// `x` in short scientific notation (`0` for zero).
pub fn sci(x: f64) -> String {
    if x == 0.0 { "0".into() } else { format!("{x:.1e}") }
}

fn reach_colour(theme: Theme) -> Rgb {
    if theme == Theme::Dark { (86, 180, 233) } else { (0, 114, 178) }
}

/// Paints both maps: one cell per `scale x scale` block of canvas pixels.
pub fn draw_maps(pic: &LayerPicture, heat: &NodeRef, reach: &NodeRef, theme: Theme) {
    let pal = Palette::of(theme);
    let n = pic.n;
    let scale = (MAP_PX / n).max(1);
    let side = n * scale;
    let paint = |r: &NodeRef, colour: &dyn Fn(usize, usize) -> Rgb| {
        let Some(canvas) = r.cast::<HtmlCanvasElement>() else { return };
        canvas.set_width(side as u32);
        canvas.set_height(side as u32);
        let mut rgba = vec![0u8; side * side * 4];
        for q in 0..n {
            for k in 0..n {
                let c = colour(q, k);
                for y in q * scale..(q + 1) * scale {
                    for x in k * scale..(k + 1) * scale {
                        let i = (y * side + x) * 4;
                        rgba[i..i + 4].copy_from_slice(&[c.0, c.1, c.2, 255]);
                    }
                }
            }
        }
        if let Some(ctx) =
            canvas.get_context("2d").ok().flatten().and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
            && let Ok(img) =
                web_sys::ImageData::new_with_u8_clamped_array_and_sh(Clamped(&rgba), side as u32, side as u32)
        {
            let _ = ctx.put_image_data(&img, 0.0, 0.0);
        }
    };
    paint(heat, &|q, k| {
        if pic.disagree.get(q, k) { MARK } else { pic.shade[q * n + k].map_or(pal.empty, |t| viridis(f64::from(t))) }
    });
    let inside = reach_colour(theme);
    paint(reach, &|q, k| {
        if pic.disagree.get(q, k) {
            MARK
        } else if pic.reach.get(q, k) {
            inside
        } else {
            pal.empty
        }
    });
}
