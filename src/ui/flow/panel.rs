//! The Flow view's panel: the model's settings, the run's status, the two maps (measured
//! influence or rollout beside the theory's `R(L)`) with their hover line, and the agreement
//! per layer.

use std::rc::Rc;

use hasseflow_core::flow::{BackendKind, LayerAgreement};
use hasseflow_core::report::{percent, percent_of_share};
use wasm_bindgen::JsCast;
use yew::prelude::*;

use super::super::form::{checked, input_value, on_click, select_value};
use super::super::io;
use super::super::palette::Theme;
use super::maps::{FlowLegend, MAP_PX, draw_maps, sci};
use crate::state::{
    BackendChoice, FlowAction, FlowMap, FlowOutcome, FlowSettings, FlowStatus, LayerPicture, Level, THRESHOLDS,
    ViewAction,
};

/// Flow panel properties.
#[derive(Properties, PartialEq, Clone)]
pub struct FlowProps {
    /// The model settings.
    pub settings: FlowSettings,
    /// The run for the current mask and settings, when finished.
    pub outcome: Option<Rc<FlowOutcome>>,
    /// Progress or failure of the current run.
    pub status: FlowStatus,
    /// Whether a run for the current key is wanted and not finished (running or about to).
    pub pending: bool,
    /// The model layer shown (`None`: `L = 0`, the inputs).
    pub layer: Option<usize>,
    /// Mask side.
    pub n: usize,
    /// The hovered cell.
    pub hover: Option<(usize, usize)>,
    /// Colour theme.
    pub theme: Theme,
    /// Reports dropped as stale so far.
    pub dropped: u64,
    /// Influence or rollout on the left map.
    pub map: FlowMap,
    /// Layers of the document's stack, if it has one.
    pub stack_layers: Option<usize>,
    /// The Flow view's settings, map and retry.
    pub on_flow: Callback<FlowAction>,
    /// Hover, the layer shown, messages.
    pub on_view: Callback<ViewAction>,
}

/// The Flow view.
#[function_component(FlowPanel)]
pub fn flow_panel(p: &FlowProps) -> Html {
    let heat_ref = use_node_ref();
    let reach_ref = use_node_ref();
    // The rollout of every layer, once per outcome and only when shown.
    let rollouts = {
        let o = p.outcome.clone();
        let wanted = p.map == FlowMap::Rollout;
        use_memo((o.as_ref().map(|o| o.key), wanted), move |_| o.filter(|_| wanted).map(|o| Rc::new(o.rollouts())))
    };
    let picture = {
        let (o, layer, map, rollouts) = (p.outcome.clone(), p.layer, p.map, rollouts.clone());
        use_memo((o.as_ref().map(|o| (o.key, o.run.report.threshold.to_bits())), layer, map), move |_| {
            o.zip(layer).map(|(o, l)| {
                let l = l.min(o.key.config.layers);
                Rc::new(match (map, (*rollouts).as_ref()) {
                    (FlowMap::Rollout, Some(r)) => o.picture_of(l, &r[l - 1], 0.0),
                    _ => o.picture(l, map),
                })
            })
        })
    };
    {
        let (heat, reach, theme) = (heat_ref.clone(), reach_ref.clone(), p.theme);
        let pic = (*picture).clone();
        let shown = p.outcome.as_ref().map(|o| (o.key, o.run.report.threshold.to_bits()));
        use_effect_with((shown, pic.as_ref().map(|p| p.layer), p.map, theme), move |_| {
            if let Some(pic) = pic {
                draw_maps(&pic, &heat, &reach, theme);
            }
        });
    }

    let set_map = |m: FlowMap| on_click(&p.on_flow, FlowAction::SetMap(m));
    let on_move = {
        let (d, n) = (p.on_view.clone(), p.n);
        Callback::from(move |e: MouseEvent| {
            let side = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                .map_or(MAP_PX as f64, |el| f64::from(el.client_width()));
            let cell = side / n as f64;
            // offsetX is a whole pixel: on maps with sub-pixel cells the last one rounds past the edge.
            let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
            let inside = (0.0..=side).contains(&x) && (0.0..=side).contains(&y);
            let at = |v: f64| ((v / cell).floor() as usize).min(n - 1);
            d.emit(ViewAction::HoverCell(inside.then(|| (at(y), at(x)))));
        })
    };
    let on_leave = on_click(&p.on_view, ViewAction::HoverCell(None));

    let (state, status) = status_line(p);
    let hover = match (p.hover, &*picture) {
        (Some((q, k)), Some(pic)) if q < pic.n && k < pic.n && !p.pending => {
            let rel = pic.relative[q * pic.n + k];
            let verdict = if pic.disagree.get(q, k) { " — disagrees with the theory" } else { "" };
            let what = if p.map == FlowMap::Rollout { "rollout weight" } else { "influence" };
            format!(
                "q = {q}, k = {k}: {what} {rel:.2e} of the layer's maximum; {} R({}){verdict}.",
                if pic.reach.get(q, k) { "in" } else { "not in" },
                pic.layer
            )
        }
        _ => "Hover a map: row q is the position whose state moves, column k the perturbed input.".into(),
    };
    let hidden = p.pending || picture.is_none();
    let lo = (*picture).as_ref().map_or(-9, |p| p.lo_decade);
    let l = p.layer.map_or("L".to_string(), |l| l.to_string());
    let of_stack = p.outcome.as_ref().is_some_and(|o| o.key.stack);

    html! {
        <section class="panel flow" id="flow-panel" aria-label="Flow" data-state={state} data-dropped={p.dropped.to_string()}
            data-revision={p.outcome.as_ref().map(|o| o.key.revision.to_string())}>
            <FlowSettingsBar settings={p.settings} stack_layers={p.stack_layers} on_flow={p.on_flow.clone()} on_view={p.on_view.clone()} />
            { status }
            <div class="segmented" role="group" aria-label="Left map">
                <button type="button" id="flow-map-influence" aria-pressed={(p.map == FlowMap::Influence).to_string()}
                    onclick={set_map(FlowMap::Influence)} title="perturb each input, measure every state">{"Influence"}</button>
                <button type="button" id="flow-map-rollout" aria-pressed={(p.map == FlowMap::Rollout).to_string()}
                    onclick={set_map(FlowMap::Rollout)} title="products of the head-averaged attention (Abnar & Zuidema): cheaper, from the unperturbed pass">{"Attention rollout"}</button>
            </div>
            <div class={classes!("flow-maps", hidden.then_some("stale"))} onmouseleave={on_leave.clone()}>
                <figure>
                    <canvas id="flow-heat" ref={heat_ref} width="256" height="256" onmousemove={on_move.clone()} onmouseleave={on_leave.clone()}
                        aria-label="measured influence heatmap" />
                    <figcaption>{ if p.map == FlowMap::Rollout {
                        format!("attention rollout after layer {l}")
                    } else {
                        format!("measured influence after layer {l}")
                    } }</figcaption>
                </figure>
                <figure>
                    <canvas id="flow-reach" ref={reach_ref} width="256" height="256" onmousemove={on_move} onmouseleave={on_leave}
                        aria-label="theory R(L)" />
                    <figcaption>{ format!("theory: R({l}){}", if of_stack { " of the stack" } else { "" }) }</figcaption>
                </figure>
            </div>
            <FlowLegend theme={p.theme} lo={lo} />
            <FlowAgreement outcome={p.outcome.clone()} layer={p.layer} picture={(*picture).clone()} pending={p.pending}
                map={p.map} on_view={p.on_view.clone()} />
            <p class="hint" id="flow-hover">{ hover }</p>
        </section>
    }
}

/// Settings bar properties.
#[derive(Properties, PartialEq, Clone)]
pub struct SettingsProps {
    /// The model settings.
    pub settings: FlowSettings,
    /// Layers of the document's stack, if it has one.
    pub stack_layers: Option<usize>,
    /// The settings.
    pub on_flow: Callback<FlowAction>,
    /// Messages (a value out of range).
    pub on_view: Callback<ViewAction>,
}

/// The model's settings (`d_model`, heads, layers, seed, backend, threshold) and, for a
/// document with a layer stack, whether to run the stack.
#[function_component(FlowSettingsBar)]
pub fn flow_settings_bar(p: &SettingsProps) -> Html {
    let s = p.settings;
    let set = |f: fn(&mut FlowSettings, u64)| {
        let (d, v) = (p.on_flow.clone(), p.on_view.clone());
        Callback::from(move |e: Event| match input_value(&e).trim().parse::<u64>().ok() {
            Some(v) => {
                let mut next = s;
                f(&mut next, v);
                d.emit(FlowAction::SetSettings(next));
            }
            None => v.emit(ViewAction::Notify(
                Level::Error,
                "flow model: enter a whole number. The settings were not changed.".into(),
            )),
        })
    };
    let on_d = set(|s, v| s.config.d_model = v as usize);
    let on_layers = set(|s, v| s.config.layers = v as usize);
    let on_seed = set(|s, v| s.config.seed = v);
    let on_heads = {
        let d = p.on_flow.clone();
        Callback::from(move |e: Event| {
            if let Ok(h) = select_value(&e).parse::<usize>() {
                let mut next = s;
                next.config.heads = h;
                d.emit(FlowAction::SetSettings(next));
            }
        })
    };
    let on_backend = {
        let d = p.on_flow.clone();
        Callback::from(move |e: Event| {
            if let Some(b) = BackendChoice::from_name(&select_value(&e)) {
                d.emit(FlowAction::SetSettings(FlowSettings { backend: b, ..s }));
            }
        })
    };
    let on_threshold = {
        let d = p.on_flow.clone();
        Callback::from(move |e: Event| {
            // One of the offered values, by its text (no float parsing in the wasm).
            let chosen = select_value(&e);
            if let Some(&threshold) = THRESHOLDS.iter().find(|t| t.to_string() == chosen) {
                d.emit(FlowAction::SetSettings(FlowSettings { threshold, ..s }));
            }
        })
    };
    let on_stack = {
        let d = p.on_flow.clone();
        Callback::from(move |e: Event| d.emit(FlowAction::SetSettings(FlowSettings { use_stack: checked(&e), ..s })))
    };
    html! {
        <>
            <div class="flow-settings toolrow">
                <label>{"d_model "}<input id="flow-d" type="number" min="16" max="128" step="8" value={s.config.d_model.to_string()} onchange={on_d} /></label>
                <label>{"heads "}<select id="flow-heads" onchange={on_heads}>
                    { for (1..=8usize).map(|h| html! { <option value={h.to_string()} selected={h == s.config.heads}>{ h }</option> }) }
                </select></label>
                <label>{"layers "}<input id="flow-layers" type="number" min="1" max="16" value={s.config.layers.to_string()} onchange={on_layers} /></label>
                <label>{"seed "}<input id="flow-seed" type="number" min="0" value={s.config.seed.to_string()} onchange={on_seed} /></label>
                <label>{"backend "}<select id="flow-backend-choice" onchange={on_backend}>
                    { for BackendChoice::ALL.iter().map(|(b, name, text)| html! { <option value={*name} selected={*b == s.backend}>{ *text }</option> }) }
                </select></label>
                <label title="relative influence above which a cell counts as influenced">{"threshold "}<select id="flow-threshold" onchange={on_threshold}>
                    { for THRESHOLDS.iter().map(|t| html! { <option value={t.to_string()} selected={*t == s.threshold}>{ format!("{t:.0e}") }</option> }) }
                </select></label>
            </div>
            if let Some(k) = p.stack_layers {
                <label class="flow-stack" title="model layer l uses stack layer (l - 1) mod K, as hasseflow flow does; edits of the grid do not change the stack">
                    <input id="flow-use-stack" type="checkbox" checked={s.use_stack} onchange={on_stack} />
                    { format!(" run the file's {k}-layer stack (else the grid's mask in every layer)") }
                </label>
            }
        </>
    }
}

/// The status line (backend badge, time, progress or failure) and the panel's `data-state`.
fn status_line(p: &FlowProps) -> (&'static str, Html) {
    let retry = on_click(&p.on_flow, FlowAction::Retry);
    let export_report = |o: Rc<FlowOutcome>| {
        let d = p.on_view.clone();
        Callback::from(move |_: MouseEvent| {
            if let Err(e) = io::download_text(&o.report_json(), "hasseflow-flow.json", "application/json") {
                d.emit(ViewAction::Notify(Level::Error, format!("download failed: {e}")));
            }
        })
    };
    match (&p.status, &p.outcome) {
        (FlowStatus::Failed(e), _) => (
            "failed",
            html! { <p class="flow-error" id="flow-error" role="alert">{ e.clone() }
            {" "}<button type="button" id="flow-retry" onclick={retry}>{"Retry"}</button></p> },
        ),
        (_, Some(o)) if !p.pending => {
            let b = &o.run.raw.backend;
            let kind = b.kind.as_str();
            let badge = if b.kind == BackendKind::Gpu {
                let name = b.adapter.as_deref().map(str::trim).filter(|a| !a.is_empty());
                let what = match (name, b.software_adapter) {
                    (Some(a), true) => format!("{a} (software)"),
                    (Some(a), false) => a.to_string(),
                    (None, true) => "software adapter".into(),
                    (None, false) => "browser adapter".into(),
                };
                format!("WebGPU · {what}")
            } else {
                match o.run.workers {
                    0 => "CPU · wasm".to_string(),
                    1 => "CPU · wasm · 1 worker".to_string(),
                    w => format!("CPU · wasm · {w} workers"),
                }
            };
            (
                "done",
                html! { <p class="flow-status">
                    <span class={classes!("badge", kind)} id="flow-backend" data-kind={kind} data-workers={o.run.workers.to_string()}>{ badge }</span>
                    <span id="flow-time" data-ms={format!("{:.1}", o.run.millis)}>{ format!(" {:.0} ms", o.run.millis) }</span>
                    if let Some(f) = &o.run.fallback { <span class="hint" id="flow-fallback">{ format!(" — {f}") }</span> }
                    {" "}<button type="button" id="flow-export" onclick={export_report(o.clone())}
                        title="the per-layer report, as hasseflow flow --json writes it">{"Export report (JSON)"}</button>
                </p> },
            )
        }
        (FlowStatus::Running(f), _) if *f > 0.0 => (
            "running",
            html! { <p class="flow-status"><progress id="flow-progress" max="1" value={f.to_string()} />
            { format!(" running on the CPU… {:.0}%", 100.0 * f) }</p> },
        ),
        _ if p.pending => {
            ("running", html! { <p class="flow-status"><progress id="flow-progress" />{" running…"}</p> })
        }
        _ => ("idle", html! { <p class="flow-status hint">{"No run yet."}</p> }),
    }
}

/// Agreement properties.
#[derive(Properties, PartialEq, Clone)]
pub struct AgreementProps {
    /// The finished run, if any.
    pub outcome: Option<Rc<FlowOutcome>>,
    /// The model layer shown (`None`: `L = 0`).
    pub layer: Option<usize>,
    /// The shown layer's picture.
    pub picture: Option<Rc<LayerPicture>>,
    /// Whether a run is wanted and not finished.
    pub pending: bool,
    /// Influence or rollout on the left map.
    pub map: FlowMap,
    /// The layer shown (a row click).
    pub on_view: Callback<ViewAction>,
}

/// A layer's influence agreement from its counts (cells that agree of `n²`), rounded down: a
/// layer with one cell off never reads "100.00%".
fn agreement(l: &LayerAgreement, n: usize) -> String {
    let cells = (n * n) as u64;
    percent(cells.saturating_sub((l.false_positives + l.false_negatives) as u64), cells, 2)
}

/// How far the measurement agrees with `R(L)` at the shown layer, and per layer (a row click
/// shows that layer).
#[function_component(FlowAgreement)]
pub fn flow_agreement(p: &AgreementProps) -> Html {
    match (&p.outcome, p.layer, &p.picture) {
        (Some(o), Some(_), Some(pic)) if !p.pending => {
            let a = &o.run.report.layers[pic.layer - 1];
            let exact_layers = o.run.report.layers.iter().filter(|l| l.agreement == 1.0).count();
            let clipped = p.layer.is_some_and(|l| l > o.key.config.layers);
            html! {
                <div class="flow-agreement" id="flow-agreement" data-agreement={a.agreement.to_string()}
                    data-disagree={pic.disagree.count_ones().to_string()} data-layer={pic.layer.to_string()}>
                    if p.map == FlowMap::Rollout {
                        <p><strong>{ format!("Rollout support agrees with R({}) on {} of cells", pic.layer, percent_of_share(a.rollout_agreement, 2)) }</strong>
                            {" (every positive rollout weight counts; the influence figures follow)."}</p>
                    }
                    <p><strong>{ format!("Influence agreement with R({}): {}", pic.layer, agreement(a, o.run.report.n)) }</strong>
                        { format!(" — {} false positive{}, {} false negative{} (threshold {:.0e} of the layer's maximum).",
                            a.false_positives, if a.false_positives == 1 { "" } else { "s" },
                            a.false_negatives, if a.false_negatives == 1 { "" } else { "s" }, o.run.report.threshold) }</p>
                    <p class="hint">{ format!(
                        "Weakest influence inside R(L): {}; strongest outside: {}. Attention rollout agrees on {}. {} of {} layers exact.",
                        sci(a.min_inside), sci(a.max_outside), percent_of_share(a.rollout_agreement, 2), exact_layers, o.run.report.layers.len()) }</p>
                    if clipped { <p class="hint">{ format!("The model has {} layers; showing its last.", o.key.config.layers) }</p> }
                    <table class="flow-layers" id="flow-layers-table" aria-label="Agreement per layer (click a row to show it)">
                        <tr><th>{"L"}</th><th>{"|R(L)|"}</th><th>{"agreement"}</th><th>{"false +"}</th><th>{"false −"}</th><th>{"rollout"}</th></tr>
                        { for o.run.report.layers.iter().map(|r| {
                            let go = on_click(&p.on_view, ViewAction::SetLayer(r.layer));
                            html! {
                                <tr class={classes!((r.layer == pic.layer).then_some("current"), (r.agreement < 1.0).then_some("off"))} onclick={go}>
                                    <td>{ r.layer }</td><td>{ r.reach }</td><td>{ agreement(r, o.run.report.n) }</td>
                                    <td>{ r.false_positives }</td><td>{ r.false_negatives }</td><td>{ percent_of_share(r.rollout_agreement, 2) }</td>
                                </tr>
                            }
                        }) }
                    </table>
                </div>
            }
        }
        (_, None, _) => {
            html! { <p class="hint" id="flow-agreement">{"L = 0 is the input: each position holds only itself. Step to L ≥ 1."}</p> }
        }
        _ => html! {},
    }
}
