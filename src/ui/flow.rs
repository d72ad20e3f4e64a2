//! The Flow view: a random Transformer runs the mask (WebGPU through `hasseflow-gpu`, or the
//! core's CPU path compiled to wasm) and the measured influence after layer `L` is drawn beside
//! the theory's `R(L)`, disagreements marked.
//!
//! Runs are asynchronous and never block painting: the GPU path awaits the device, the CPU path
//! runs one layer of one pass at a time and yields to the browser every [`SLICE_MS`]. Each run is
//! started for a [`FlowKey`] and cancelled when the key changes (its effect's cleanup); whatever
//! it still reports is dropped by the reducer, which compares keys.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use hasseflow_core::flow::{BackendKind, FlowMasks, FlowModel, FlowRaw, ReportBuilder, cpu};
use hasseflow_gpu::GpuFlow;
use wasm_bindgen::{Clamped, JsCast};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};
use yew::prelude::*;

use super::form::{checked, input_value, select_value};
use super::io;
use super::palette::{Palette, Rgb, Theme, css, viridis};
use crate::state::{
    Action, AdapterSeen, BackendChoice, BackendPlan, FlowKey, FlowMap, FlowOutcome, FlowRequest, FlowRun, FlowSettings,
    FlowStatus, LayerPicture, THRESHOLDS, plan_backend,
};

/// Longest stretch the CPU path computes before yielding to the browser.
const SLICE_MS: f64 = 12.0;
/// Delay before a run starts, so a burst of edits (undo held down) starts one run, not many.
const DEBOUNCE_MS: u32 = 120;
/// Canvas pixels per side of each map (at least; CSS scales it to the panel).
const MAP_PX: usize = 256;
/// Disagreement marker: a magenta that neither viridis nor the "new" vermillion uses.
const MARK: Rgb = (230, 0, 126);

/// The browser's WebGPU device, opened once per page and shared by every run.
pub enum GpuSlot {
    /// Not asked for yet.
    Untried,
    /// Opened, kernels compiled.
    Ready(Rc<GpuFlow>),
    /// No adapter or no device; the reason, shown in the UI.
    Unavailable(String),
}

/// The slot as the app holds it.
pub type SharedGpu = Rc<RefCell<GpuSlot>>;

async fn gpu(slot: &SharedGpu) -> Result<Rc<GpuFlow>, String> {
    let known = match &*slot.borrow() {
        GpuSlot::Ready(g) => Some(Ok(g.clone())),
        GpuSlot::Unavailable(e) => Some(Err(e.clone())),
        GpuSlot::Untried => None,
    };
    if let Some(r) = known {
        return r;
    }
    let opened = if web_sys::window().is_some_and(|w| {
        js_sys::Reflect::get(&w.navigator(), &"gpu".into()).is_ok_and(|g| !g.is_undefined() && !g.is_null())
    }) {
        GpuFlow::new().await.map(Rc::new).map_err(|e| match e {
            hasseflow_gpu::GpuError::NoAdapter(_) => "the browser offers no WebGPU adapter".to_string(),
            e => e.to_string(),
        })
    } else {
        Err("this browser has no WebGPU (navigator.gpu is missing)".to_string())
    };
    *slot.borrow_mut() = match &opened {
        Ok(g) => GpuSlot::Ready(g.clone()),
        Err(e) => GpuSlot::Unavailable(e.clone()),
    };
    opened
}

/// Waits `ms` milliseconds (0: until the browser has handled pending events and painted).
async fn pause(ms: u32) {
    gloo_timers::future::TimeoutFuture::new(ms).await;
}

/// The CPU path in slices of at most [`SLICE_MS`]; `None` when cancelled.
async fn cpu_sliced(
    model: &FlowModel,
    masks: &FlowMasks,
    key: FlowKey,
    cancel: &Cell<bool>,
    d: &Callback<Action>,
) -> Option<FlowRaw> {
    let mut job = cpu::CpuFlowJob::new(model, masks);
    loop {
        let start = io::now();
        while io::now() - start < SLICE_MS {
            if job.step_layers(model, masks, 1) {
                return Some(job.finish());
            }
        }
        d.emit(Action::FlowProgress { key, progress: job.progress() });
        pause(0).await;
        if cancel.get() {
            return None;
        }
    }
}

/// Runs `req` and reports back through `d` (progress, then the result or the failure), unless
/// `cancel` is set first.
pub async fn run(req: FlowRequest, threshold: f64, slot: SharedGpu, cancel: Rc<Cell<bool>>, d: Callback<Action>) {
    pause(DEBOUNCE_MS).await;
    if cancel.get() {
        return;
    }
    let key = req.key;
    let fail = |error: String| d.emit(Action::FlowFailed { key, error });
    let built = FlowModel::new(key.config, req.source.n()).and_then(|m| Ok((m, req.source.masks(&key.config)?)));
    let (model, masks) = match built {
        Ok(b) => b,
        Err(e) => return fail(e.to_string()),
    };
    d.emit(Action::FlowProgress { key, progress: 0.0 });
    let gpu = match key.backend {
        BackendChoice::Cpu => Err("CPU chosen".to_string()),
        _ => gpu(&slot).await,
    };
    if cancel.get() {
        return;
    }
    let start = io::now();
    let seen = gpu.as_ref().map(|g| AdapterSeen { name: g.adapter().name.clone(), software: g.adapter().software });
    let plan = plan_backend(key.backend, seen.as_ref().map_err(|e| e.as_str()));
    let (raw, fallback) = match (plan, gpu) {
        (BackendPlan::Fail(e), _) => return fail(e),
        (BackendPlan::Cpu { note }, _) => (cpu_sliced(&model, &masks, key, &cancel, &d).await, note),
        (BackendPlan::Gpu { fallback }, Ok(g)) => match g.run(&model, &masks).await {
            Ok(raw) => (Some(raw), None),
            Err(e) if fallback => {
                let raw = cpu_sliced(&model, &masks, key, &cancel, &d).await;
                (raw, Some(format!("CPU fallback: the WebGPU run failed ({e})")))
            }
            Err(e) => return fail(format!("the WebGPU run failed: {e}")),
        },
        (BackendPlan::Gpu { .. }, Err(e)) => return fail(format!("WebGPU is not available: {e}")),
    };
    let Some(raw) = raw else { return };
    if cancel.get() {
        return;
    }
    // The comparison, one layer per slice (rollout is `O(ones(A) · n)` a layer).
    let mut builder = ReportBuilder::new(&raw, &masks, threshold);
    while !builder.step(&raw) {
        pause(0).await;
        if cancel.get() {
            return;
        }
    }
    let report = builder.finish();
    let millis = io::now() - start;
    d.emit(Action::FlowFinished { key, run: FlowRun { raw: Rc::new(raw), report, millis, fallback } });
}

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
    /// Dispatch.
    pub dispatch: Callback<Action>,
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

    let s = p.settings;
    let set = |f: fn(&mut FlowSettings, u64)| {
        let d = p.dispatch.clone();
        Callback::from(move |e: Event| match input_value(&e).trim().parse::<u64>().ok() {
            Some(v) => {
                let mut next = s;
                f(&mut next, v);
                d.emit(Action::SetFlowSettings(next));
            }
            None => d.emit(Action::Notify(
                crate::state::Level::Error,
                "flow model: enter a whole number. The settings were not changed.".into(),
            )),
        })
    };
    let on_d = set(|s, v| s.config.d_model = v as usize);
    let on_layers = set(|s, v| s.config.layers = v as usize);
    let on_seed = set(|s, v| s.config.seed = v);
    let on_heads = {
        let d = p.dispatch.clone();
        Callback::from(move |e: Event| {
            if let Ok(h) = select_value(&e).parse::<usize>() {
                let mut next = s;
                next.config.heads = h;
                d.emit(Action::SetFlowSettings(next));
            }
        })
    };
    let on_backend = {
        let d = p.dispatch.clone();
        Callback::from(move |e: Event| {
            if let Some(b) = BackendChoice::from_name(&select_value(&e)) {
                d.emit(Action::SetFlowSettings(FlowSettings { backend: b, ..s }));
            }
        })
    };
    let on_threshold = {
        let d = p.dispatch.clone();
        Callback::from(move |e: Event| {
            if let Ok(v) = select_value(&e).parse::<f64>() {
                d.emit(Action::SetFlowSettings(FlowSettings { threshold: v, ..s }));
            }
        })
    };
    let on_stack = {
        let d = p.dispatch.clone();
        Callback::from(move |e: Event| d.emit(Action::SetFlowSettings(FlowSettings { use_stack: checked(&e), ..s })))
    };
    let set_map = |m: FlowMap| {
        let d = p.dispatch.clone();
        Callback::from(move |_: MouseEvent| d.emit(Action::SetFlowMap(m)))
    };
    let export_report = |o: Rc<FlowOutcome>| {
        let d = p.dispatch.clone();
        Callback::from(move |_: MouseEvent| {
            if let Err(e) = io::download_text(&o.report_json(), "hasseflow-flow.json", "application/json") {
                d.emit(Action::Notify(crate::state::Level::Error, format!("download failed: {e}")));
            }
        })
    };
    let retry = {
        let d = p.dispatch.clone();
        Callback::from(move |_: MouseEvent| d.emit(Action::RetryFlow))
    };
    let on_move = {
        let (d, n) = (p.dispatch.clone(), p.n);
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
            d.emit(Action::HoverCell(inside.then(|| (at(y), at(x)))));
        })
    };
    let on_leave = {
        let d = p.dispatch.clone();
        Callback::from(move |_: MouseEvent| d.emit(Action::HoverCell(None)))
    };

    // Status line: backend badge, time, progress or failure.
    let (state, status) = match (&p.status, &p.outcome) {
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
                "CPU · wasm".to_string()
            };
            (
                "done",
                html! { <p class="flow-status">
                    <span class={classes!("badge", kind)} id="flow-backend" data-kind={kind}>{ badge }</span>
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
    };

    let agreement = match (&p.outcome, p.layer, &*picture) {
        (Some(o), Some(_), Some(pic)) if !p.pending => {
            let a = &o.run.report.layers[pic.layer - 1];
            let exact_layers = o.run.report.layers.iter().filter(|l| l.agreement == 1.0).count();
            let clipped = p.layer.is_some_and(|l| l > o.key.config.layers);
            html! {
                <div class="flow-agreement" id="flow-agreement" data-agreement={a.agreement.to_string()}
                    data-disagree={pic.disagree.count_ones().to_string()} data-layer={pic.layer.to_string()}>
                    if p.map == FlowMap::Rollout {
                        <p><strong>{ format!("Rollout support agrees with R({}) on {:.2}% of cells", pic.layer, 100.0 * a.rollout_agreement) }</strong>
                            {" (every positive rollout weight counts; the influence figures follow)."}</p>
                    }
                    <p><strong>{ format!("Influence agreement with R({}): {:.2}%", pic.layer, 100.0 * a.agreement) }</strong>
                        { format!(" — {} false positive{}, {} false negative{} (threshold {:.0e} of the layer's maximum).",
                            a.false_positives, if a.false_positives == 1 { "" } else { "s" },
                            a.false_negatives, if a.false_negatives == 1 { "" } else { "s" }, o.run.report.threshold) }</p>
                    <p class="hint">{ format!(
                        "Weakest influence inside R(L): {}; strongest outside: {}. Attention rollout agrees on {:.2}%. {} of {} layers exact.",
                        sci(a.min_inside), sci(a.max_outside), 100.0 * a.rollout_agreement, exact_layers, o.run.report.layers.len()) }</p>
                    if clipped { <p class="hint">{ format!("The model has {} layers; showing its last.", o.key.config.layers) }</p> }
                    <table class="flow-layers" id="flow-layers-table" aria-label="Agreement per layer (click a row to show it)">
                        <tr><th>{"L"}</th><th>{"|R(L)|"}</th><th>{"agreement"}</th><th>{"false +"}</th><th>{"false −"}</th><th>{"rollout"}</th></tr>
                        { for o.run.report.layers.iter().map(|r| {
                            let go = { let d = p.dispatch.clone(); let l = r.layer; Callback::from(move |_: MouseEvent| d.emit(Action::SetLayer(l))) };
                            html! {
                                <tr class={classes!((r.layer == pic.layer).then_some("current"), (r.agreement < 1.0).then_some("off"))} onclick={go}>
                                    <td>{ r.layer }</td><td>{ r.reach }</td><td>{ format!("{:.2}%", 100.0 * r.agreement) }</td>
                                    <td>{ r.false_positives }</td><td>{ r.false_negatives }</td><td>{ format!("{:.2}%", 100.0 * r.rollout_agreement) }</td>
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
    };
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
    let pal = Palette::of(p.theme);
    let lo = (*picture).as_ref().map_or(-9, |p| p.lo_decade);
    let l = p.layer.map_or("L".to_string(), |l| l.to_string());
    let of_stack = p.outcome.as_ref().is_some_and(|o| o.key.stack);

    html! {
        <section class="panel flow" id="flow-panel" aria-label="Flow" data-state={state} data-dropped={p.dropped.to_string()}
            data-revision={p.outcome.as_ref().map(|o| o.key.revision.to_string())}>
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
            <div class="legend flow-legend" aria-label="Flow legend">
                <span class="swatch-item">
                    <svg width="120" height="12" aria-hidden="true">
                        <defs><linearGradient id="flow-ramp">
                            { for (0..=8).map(|i| html! { <stop offset={format!("{}%", i * 100 / 8)} stop-color={css(viridis(f64::from(i) / 8.0))} /> }) }
                        </linearGradient></defs>
                        <rect width="120" height="12" fill="url(#flow-ramp)" />
                    </svg>
                    { format!("relative influence, log scale: {} … 1", pow10(lo)) }
                </span>
                <span class="swatch-item"><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill={css(pal.empty)} /></svg>{"0 (no influence)"}</span>
                <span class="swatch-item"><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill={css(reach_colour(p.theme))} /></svg>{"in R(L)"}</span>
                <span class="swatch-item"><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill={css(MARK)} /></svg>{"measurement ≠ theory"}</span>
            </div>
            { agreement }
            <p class="hint" id="flow-hover">{ hover }</p>
        </section>
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
fn sci(x: f64) -> String {
    if x == 0.0 { "0".into() } else { format!("{x:.1e}") }
}

fn reach_colour(theme: Theme) -> Rgb {
    if theme == Theme::Dark { (86, 180, 233) } else { (0, 114, 178) }
}

/// Paints both maps: one cell per `scale x scale` block of canvas pixels.
fn draw_maps(pic: &LayerPicture, heat: &NodeRef, reach: &NodeRef, theme: Theme) {
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
