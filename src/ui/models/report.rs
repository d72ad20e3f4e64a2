//! The report of a model run: the verdict and leaks, the per-layer plot (coverage and lookback
//! against the layer, over a strip of the layers' kinds), the per-layer table (each type marked
//! with its kind's colour, as in the legend), and the limit's compressed Hasse diagram.

use std::rc::Rc;

use hasseflow_core::report::percent;
use hasseflow_render::{HasseInput, LayoutOptions, layout};
use yew::prelude::*;

use super::super::chart;
use super::super::form::on_click;
use super::super::order::OrderDiagram;
use super::heatmap::grouped;
use super::kinds::kind_swatch;
use crate::state::{LayerLegend, ModelOutcome, ModelsAction, OrderView};

/// Most compressed Hasse nodes drawn (the layout's time grows quickly past this).
const MAX_DRAWN_NODES: usize = 200;

/// Properties of the parts that read only the outcome.
#[derive(Properties, Clone)]
pub struct OutcomeProps {
    /// The run.
    pub outcome: Rc<ModelOutcome>,
}

impl PartialEq for OutcomeProps {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.outcome, &o.outcome)
    }
}

/// Properties of the parts that also show and set the layer.
#[derive(Properties, Clone)]
pub struct LayerProps {
    /// The run.
    pub outcome: Rc<ModelOutcome>,
    /// The layer shown.
    pub layer: usize,
    /// The kinds of the run's layers (the legend's colours).
    pub legend: Rc<LayerLegend>,
    /// The Models view's layer and zoom.
    pub on_models: Callback<ModelsAction>,
}

impl PartialEq for LayerProps {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.outcome, &o.outcome) && self.layer == o.layer && Rc::ptr_eq(&self.legend, &o.legend)
    }
}

/// The CSS class of layer `l`'s kind (1-based), from the legend.
fn kind_class(legend: &LayerLegend, l: usize) -> &'static str {
    legend.strip.get(l.wrapping_sub(1)).and_then(|&e| legend.entries.get(e)).map_or("", |e| e.class)
}

/// The verdict, the leaks and the time.
#[function_component(Verdict)]
pub fn verdict(p: &OutcomeProps) -> Html {
    let run = &p.outcome.run;
    let r = &run.report;
    let leaking: Vec<String> = r.layers.iter().filter(|l| l.leaks).map(|l| l.layer.to_string()).collect();
    let leaks = if run.overlays.docs.is_empty() {
        "One document: nothing can leak.".to_string()
    } else if leaking.is_empty() {
        format!("{} documents: no layer leaks across a document boundary.", run.overlays.docs.len())
    } else {
        let first = r.layers.iter().find(|l| l.leaks).map_or(0, |l| l.leaking_queries);
        format!(
            "Leaks across documents at layer{} {} ({} queries read another document at layer {}).",
            if leaking.len() == 1 { "" } else { "s" },
            leaking.join(", "),
            grouped(first),
            leaking[0]
        )
    };
    let structure = match (r.limit.classes, &r.limit.hasse) {
        (Some(c), Some(h)) => format!(
            "The limit: {} classes, {} component{}, compressed Hasse diagram of {} node{}.",
            grouped(c),
            r.limit.components,
            if r.limit.components == 1 { "" } else { "s" },
            h.node_count,
            if h.node_count == 1 { "" } else { "s" }
        ),
        _ => format!("The limit: {} component(s); {}.", r.limit.components, r.limit.method),
    };
    // An encoder-decoder's positions: the encoder's first, then the decoder's.
    let (sides, split) = match &run.spec.encoder {
        Some(e) => (
            // Narrow no-break spaces: a number never wraps inside the heading.
            format!(" (encoder {} + decoder {})", grouped(e.context), grouped(run.n - e.context))
                .replace('\u{2009}', "\u{202f}"),
            format!(
                " Positions 0–{} are the encoder's, {}–{} the decoder's.",
                e.context.saturating_sub(1),
                e.context,
                run.n.saturating_sub(1)
            ),
        ),
        None => (String::new(), String::new()),
    };
    let images = match run.overlays.images.len() {
        0 => String::new(),
        k => format!(
            " Image span{} {}: each image's tokens read each other both ways.",
            if k == 1 { "" } else { "s" },
            run.overlays.images.iter().take(6).map(|[s, l]| format!("{s}:{l}")).collect::<Vec<_>>().join(",")
                + if k > 6 { ",…" } else { "" }
        ),
    };
    html! {
        <section class="panel verdict" id="model-verdict" aria-label="Verdict" data-full-at={r.full_at.map(|x| x.to_string())}
            data-short={r.shortfall.queries.to_string()} data-depth={r.depth.to_string()} data-leaks={run.leaks().to_string()}
            data-ms={format!("{:.1}", p.outcome.millis)} data-n={run.n.to_string()} data-model={run.spec.name.clone()}
            data-limit-cells={r.limit_cells.to_string()}>
            <p class="verdict-line"><strong>{ format!("{} at n = {}{sides}: ", run.spec.name, grouped(run.n)) }</strong>
                <span id="model-verdict-text">{ run.verdict() }</span>
                { match r.full_at { Some(_) => String::new(), None => format!(" — after layer {} of {}.", r.depth, r.depth) } }</p>
            <p id="model-leaks" class={classes!("leaks", run.leaks().then_some("leaking"))}>{ leaks }</p>
            <p class="hint">{ structure }{ split }{ images }{ format!(" Computed in {:.0} ms in this browser.", p.outcome.millis) }</p>
        </section>
    }
}

/// Coverage and lookback against the layer, as SVG elements; a click picks the layer.
#[function_component(LayerPlot)]
pub fn layer_plot(p: &LayerProps) -> Html {
    let (w, h, left, bottom) = (420.0, 190.0, 36.0, 26.0);
    let r = &p.outcome.run.report;
    let n = r.n.max(1) as f64;
    let limit = r.limit_cells.max(1) as f64;
    let depth = r.layers.len().max(1);
    let x = |l: usize| left + (w - left - 10.0) * l as f64 / depth as f64;
    let y = |v: f64| (h - bottom) - (h - bottom - 8.0) * v.clamp(0.0, 1.0);
    let pt = |l: usize, v: f64| format!("{:.1},{:.1}", x(l), y(v));
    let cov: Vec<String> = r.growth.iter().enumerate().map(|(l, &c)| pt(l, c as f64 / limit)).collect();
    let med: Vec<String> =
        std::iter::once(pt(0, 0.0)).chain(r.layers.iter().map(|l| pt(l.layer, l.lookback.median as f64 / n))).collect();
    let band: Vec<String> = std::iter::once(pt(0, 0.0))
        .chain(r.layers.iter().map(|l| pt(l.layer, l.lookback.max as f64 / n)))
        .chain(r.layers.iter().rev().map(|l| pt(l.layer, l.lookback.min as f64 / n)))
        .collect();
    let layer = p.layer.clamp(1, depth);
    let onclick = {
        let d = p.on_models.clone();
        Callback::from(move |e: MouseEvent| {
            // The SVG scales with the column: map the pointer into its viewBox.
            let Some(rect) = e
                .target()
                .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
                .and_then(|el| el.closest("svg").ok().flatten())
                .map(|el| el.get_bounding_client_rect())
            else {
                return;
            };
            let px = (f64::from(e.client_x()) - rect.left()) * w / rect.width().max(1.0);
            let l = ((px - left) / (w - left - 10.0) * depth as f64).round();
            d.emit(ModelsAction::SetLayer(l.clamp(1.0, depth as f64) as usize));
        })
    };
    let summary = r
        .layers
        .iter()
        .map(|l| {
            format!(
                "layer {}: coverage {}, median lookback {:.1}%",
                l.layer,
                percent(l.cells, r.limit_cells, 1),
                100.0 * l.lookback.median as f64 / n
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let cur = &r.layers[layer - 1];
    html! {
        <section class="panel model-plot" aria-label="Coverage and lookback per layer">
            <span class="title">{"Coverage and lookback per layer"}</span>
            <svg id="model-plot" viewBox={format!("0 0 {w} {h}")} width={w.to_string()} height={h.to_string()} role="img" aria-label={summary} {onclick}>
                <polygon class="band" points={band.join(" ")} />
                { chart::line("axis", (left, y(0.0)), (w - 6.0, y(0.0))) }
                { chart::line("axis", (left, y(1.0)), (left, y(0.0))) }
                { chart::line("grid", (left, y(1.0)), (w - 6.0, y(1.0))) }
                { chart::line("cursor-line", (x(layer), y(1.0)), (x(layer), y(0.0))) }
                // Layer l spans x(l - 1)..x(l) on the axis: a strip of its kind's colour under it.
                <g class="plot-kinds" aria-hidden="true">
                    { for (1..=depth).map(|l| html! { <rect class={kind_class(&p.legend, l)} x={chart::at(x(l - 1))}
                        y={chart::at(y(0.0) + 2.0)} width={chart::at((x(l) - x(l - 1)).max(0.5))} height="5" /> }) }
                </g>
                <polyline class="median" points={med.join(" ")} />
                <polyline class="coverage" points={cov.join(" ")} />
                { for r.growth.iter().enumerate().filter(|(l, _)| depth <= 64 || l % 4 == 0).map(|(l, &c)| html! {
                    <circle class="dot" cx={chart::at(x(l))} cy={chart::at(y(c as f64 / limit))} r="2.5" />
                }) }
                { chart::tick((left - 4.0, y(1.0) + 4.0), "end", "1".into()) }
                { chart::tick((left - 4.0, y(0.0) + 4.0), "end", "0".into()) }
                { chart::tick((left, h - 8.0), "middle", "0".into()) }
                { chart::tick((x(depth), h - 8.0), "middle", depth.to_string().into()) }
                { chart::tick(((w + left) / 2.0, h - 8.0), "middle", "layer l".into()) }
            </svg>
            <div class="legend">
                <span class="swatch-item"><svg width="22" height="10" aria-hidden="true"><line class="coverage" x1="1" y1="5" x2="21" y2="5" /><circle class="dot" cx="11" cy="5" r="2.5" /></svg>{"coverage |R(l)| / |limit| (solid, dots)"}</span>
                <span class="swatch-item"><svg width="22" height="10" aria-hidden="true"><line class="median" x1="1" y1="5" x2="21" y2="5" /></svg>{"median lookback / n (dashed)"}</span>
                <span class="swatch-item"><svg width="22" height="10" aria-hidden="true"><rect class="band" width="22" height="10" /></svg>{"min–max lookback / n (band)"}</span>
            </div>
            <p class="hint">{ format!("Layer {layer}: coverage {}, lookback {:.2}% / {:.2}% / {:.2}% of n (min / median / max). Click the plot to pick a layer.",
                percent(cur.cells, r.limit_cells, 2), 100.0 * cur.lookback.min as f64 / n, 100.0 * cur.lookback.median as f64 / n, 100.0 * cur.lookback.max as f64 / n) }</p>
        </section>
    }
}

/// One row per layer: type, `|R(l)|`, coverage, lookback, leaks.
#[function_component(LayerTable)]
pub fn layer_table(p: &LayerProps) -> Html {
    let r = &p.outcome.run.report;
    html! {
        <section class="panel model-layers" aria-label="Per-layer figures">
            <div class="table-scroll" tabindex="0" role="region" aria-label="Per-layer table (scrolls)">
                <table id="model-layers-table" aria-label="Per layer: type, reached cells, coverage, lookback (click a row to show it)">
                    <thead><tr><th>{"l"}</th><th>{"type"}</th><th class="num">{"|R(l)|"}</th><th class="num">{"coverage"}</th><th class="num" title="lookback: min / median / max over queries">{"lookback"}</th><th>{"leaks"}</th></tr></thead>
                    <tbody>
                    { for r.layers.iter().map(|l| {
                        let go = on_click(&p.on_models, ModelsAction::SetLayer(l.layer));
                        html! {
                            <tr class={classes!((l.layer == p.layer).then_some("current"))} onclick={go} data-layer={l.layer.to_string()} data-cells={l.cells.to_string()}
                                data-lookback={format!("{}/{}/{}", l.lookback.min, l.lookback.median, l.lookback.max)}>
                                <td>{ l.layer }</td><td class="type">{ kind_swatch(kind_class(&p.legend, l.layer), 8) }{ l.label.clone() }</td>
                                <td class="num">{ grouped(l.cells) }</td>
                                <td class="num">{ percent(l.cells, r.limit_cells, 2) }</td>
                                <td class="num">{ format!("{} / {} / {}", grouped(l.lookback.min), grouped(l.lookback.median), grouped(l.lookback.max)) }</td>
                                <td>{ if l.leaks { format!("yes ({})", grouped(l.leaking_queries)) } else { "no".into() } }</td>
                            </tr>
                        }
                    }) }
                    </tbody>
                </table>
            </div>
        </section>
    }
}

/// The compressed Hasse diagram of the limit (chains `a–b` as single nodes), or why it is not
/// drawn.
#[function_component(HasseOfLimit)]
pub fn hasse_of_limit(p: &OutcomeProps) -> Html {
    let hover = use_state(|| None::<usize>);
    let scene = {
        let o = p.outcome.clone();
        use_memo(Rc::as_ptr(&o) as usize, move |_| {
            let h = o.run.report.limit.hasse.as_ref()?;
            if h.nodes.len() > MAX_DRAWN_NODES {
                return None;
            }
            let classes: Vec<Vec<usize>> = (0..h.nodes.len()).map(|i| vec![i]).collect();
            let labels: Vec<String> = h.nodes.iter().map(|n| n.label.clone()).collect();
            let edges: Vec<(usize, usize)> = h.edges.iter().map(|e| (e.lower as usize, e.upper as usize)).collect();
            Some(Rc::new(layout(
                &HasseInput { classes: &classes, edges: &edges, labels: Some(&labels) },
                &LayoutOptions::default(),
            )))
        })
    };
    let limit = &p.outcome.run.report.limit;
    let text = match &limit.hasse {
        None => format!("Not drawn: {}.", limit.method),
        Some(h) if (*scene).is_none() => format!(
            "{} nodes and {} edges: too many to draw here (first: {}).",
            h.node_count,
            h.edge_count,
            h.nodes.iter().take(6).map(|n| n.label.as_str()).collect::<Vec<_>>().join(", ")
        ),
        Some(h) => format!(
            "{} node{}, {} edge{}{}; a node a–b is a chain of positions a → … → b.",
            h.node_count,
            if h.node_count == 1 { "" } else { "s" },
            h.edge_count,
            if h.edge_count == 1 { "" } else { "s" },
            if h.truncated { " (truncated)" } else { "" }
        ),
    };
    let on_hover = {
        let hover = hover.clone();
        Callback::from(move |c| hover.set(c))
    };
    html! {
        <section class="panel order model-hasse" aria-label="Compressed Hasse diagram of the limit">
            <span class="title">{"Order of the limit (compressed Hasse diagram)"}</span>
            if let Some(scene) = (*scene).clone() {
                <OrderDiagram scene={scene} full_edges={Rc::new(Vec::new())} full_truncated={false} view={OrderView::Hasse}
                    lit={Rc::new(Vec::new())} hover_class={*hover} on_hover_class={on_hover} />
            }
            <p class="hint" id="model-hasse-note">{ text }</p>
        </section>
    }
}
