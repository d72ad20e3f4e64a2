//! The legend of the model's layer kinds: one strip cell per layer in run order (an
//! encoder-decoder's encoder first), coloured by kind, the current layer outlined; under it every
//! kind present with its count and what a query reads in it. The store computes the legend
//! ([`LayerLegend`]); the table and the plot colour their layers with the same classes.

use std::rc::Rc;

use yew::prelude::*;

use crate::state::LayerLegend;

/// Width of the strip's drawing (its viewBox; it scales with the panel).
const STRIP_W: f64 = 240.0;
/// Gap between an encoder-decoder's encoder and decoder cells.
const GAP: f64 = 6.0;

/// Legend properties.
#[derive(Properties, Clone)]
pub struct KindsProps {
    /// The legend of the model.
    pub legend: Rc<LayerLegend>,
    /// The layer the heatmap shows (1-based), outlined in the strip.
    pub layer: usize,
}

impl PartialEq for KindsProps {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.legend, &o.legend) && self.layer == o.layer
    }
}

/// A small swatch of a kind's colour (decorative: the text beside it names the kind).
pub fn kind_swatch(class: &'static str, size: u32) -> Html {
    html! {
        <svg class="kind-swatch" width={size.to_string()} height={size.to_string()} aria-hidden="true">
            <rect class={class} width={size.to_string()} height={size.to_string()} />
        </svg>
    }
}

/// The strip and the legend.
#[function_component(LayerKinds)]
pub fn layer_kinds(p: &KindsProps) -> Html {
    let l = &p.legend;
    let count = l.strip.len().max(1);
    let enc = l.encoder_layers;
    let gap = if enc > 0 && enc < count { GAP } else { 0.0 };
    let cell = (STRIP_W - gap) / count as f64;
    let x = |i: usize| i as f64 * cell + if i >= enc && enc > 0 { gap } else { 0.0 };
    let inset = if cell > 3.0 { 0.5 } else { 0.0 };
    let height = 27.0;
    let current = p.layer.clamp(1, count) - 1;
    html! {
        <section class="panel model-kinds" aria-label="Layer kinds">
            <span class="title">{"Layer kinds"}</span>
            <svg id="model-kind-strip" class="kind-strip" viewBox={format!("0 0 {STRIP_W} {height}")} role="img"
                aria-label={l.summary.clone()} data-layers={l.strip.len().to_string()}>
                { for l.strip.iter().enumerate().map(|(i, &e)| {
                    let entry = &l.entries[e];
                    html! {
                        <rect class={entry.class} x={format!("{:.2}", x(i) + inset)} y="1" width={format!("{:.2}", (cell - 2.0 * inset).max(0.3))} height="12">
                            <title>{ format!("layer {}: {}", i + 1, entry.name) }</title>
                        </rect>
                    }
                }) }
                <rect class="strip-current" x={format!("{:.2}", x(current))} y="0.5" width={format!("{:.2}", cell.max(1.5))} height="13" />
                if enc > 0 {
                    <text class="tick" x={format!("{:.1}", x(0))} y="24">{ format!("encoder ({enc})") }</text>
                    <text class="tick" x={format!("{:.1}", x(enc))} y="24">{ format!("decoder ({})", count - enc) }</text>
                } else {
                    <text class="tick" x="0" y="24">{"layer 1"}</text>
                    <text class="tick" x={STRIP_W.to_string()} y="24" text-anchor="end">{ format!("layer {count}") }</text>
                }
            </svg>
            <ul class="kind-legend" id="model-kinds">
                { for l.entries.iter().map(|e| html! {
                    <li data-family={e.family} data-role={e.role.as_str()} data-count={e.count.to_string()}>
                        { kind_swatch(e.class, 10) }
                        <span><strong>{ e.name.clone() }</strong>{ format!(" × {}: ", e.count) }
                            <span class="meaning">{ e.meaning.clone() }</span></span>
                    </li>
                }) }
            </ul>
        </section>
    }
}
