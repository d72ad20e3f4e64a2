//! The designer view: choose a task family and its options, derive it (the reducer runs the core's
//! pipeline), and see every task (mask, inputs/labels, Hasse diagram), the minimal merged task's
//! diagram with the tasks each node serves, and the derived dense and sparse masks. Equivalent
//! nodes share a colour; hovering one lights up all its equivalents. Drawing only: the
//! derivation and everything it implies come from [`Design`].

use std::rc::Rc;

use hasseflow_core::BitMatrix;
use hasseflow_render::{Engine, HasseInput, LayoutOptions, Scene, layout};
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};
use yew::prelude::*;

use super::form::{checked, input_value, select_value};
use super::io;
use super::palette::{Palette, Theme};
use crate::state::{Action, Design, FamilySpec, Level, MAX_TASKS_DRAWN};

/// Fill colour of merged node `c` (and of every task node equivalent to it): golden-angle hues,
/// light enough for dark captions. An SVG attribute, not a style (the CSP forbids inline styles).
fn node_fill(c: usize) -> String {
    format!("hsl({:.0}, 70%, 78%)", (c as f64 * 137.508) % 360.0)
}

/// What the form holds before "Derive".
#[derive(Clone, PartialEq)]
struct Draft {
    family: String,
    n: usize,
    block: usize,
    prompt: usize,
    span: usize,
    stride: usize,
    bidirectional: bool,
    pad: bool,
    minimal: bool,
    mask_token: bool,
    causal_encoder: bool,
    clean_causal: bool,
    query_causal: bool,
    interleaved: bool,
    radius: usize,
}

impl Default for Draft {
    fn default() -> Self {
        Draft {
            family: "butterfly".into(),
            n: 4,
            block: 2,
            prompt: 0,
            span: 2,
            stride: 0,
            bidirectional: false,
            pad: false,
            minimal: false,
            mask_token: false,
            causal_encoder: false,
            clean_causal: false,
            query_causal: false,
            interleaved: false,
            radius: 1,
        }
    }
}

impl Draft {
    /// The form showing `spec` (a family file leaves the built-in fields at their defaults).
    fn from_spec(spec: &FamilySpec) -> Draft {
        let d = Draft::default();
        match spec.clone() {
            FamilySpec::Autoregressive { n, bidirectional, pad } => {
                Draft { family: "autoregressive".into(), n, bidirectional, pad, ..d }
            }
            FamilySpec::Block { n, block, prompt, minimal, clean_causal, query_causal, interleaved } => Draft {
                family: "block".into(),
                n,
                block,
                prompt,
                minimal,
                clean_causal,
                query_causal,
                interleaved,
                ..d
            },
            FamilySpec::Butterfly { n, minimal, mask_token, radius } => {
                Draft { family: "butterfly".into(), n, minimal, mask_token, radius, ..d }
            }
            FamilySpec::Mae { n, span, stride, causal_encoder } => {
                Draft { family: "mae".into(), n, span, stride, causal_encoder, ..d }
            }
            FamilySpec::File { .. } => d,
        }
    }

    fn spec(&self) -> FamilySpec {
        match self.family.as_str() {
            "block" => FamilySpec::Block {
                n: self.n,
                block: self.block,
                prompt: self.prompt,
                minimal: self.minimal,
                clean_causal: self.clean_causal,
                query_causal: self.query_causal,
                interleaved: self.interleaved,
            },
            "butterfly" => FamilySpec::Butterfly {
                n: self.n,
                minimal: self.minimal,
                mask_token: self.mask_token,
                radius: self.radius,
            },
            "mae" => {
                FamilySpec::Mae { n: self.n, span: self.span, stride: self.stride, causal_encoder: self.causal_encoder }
            }
            _ => FamilySpec::Autoregressive { n: self.n, bidirectional: self.bidirectional, pad: self.pad },
        }
    }
}

/// Designer properties.
#[derive(Properties, Clone)]
pub struct DesignerProps {
    /// The latest derivation.
    pub design: Option<Rc<Design>>,
    /// The hovered merged node.
    pub hover: Option<usize>,
    /// Number of the derivation shown.
    pub seq: u64,
    /// Colour theme.
    pub theme: Theme,
    /// The share-link fragment of the derivation shown, or why there is none.
    pub link: Result<String, String>,
    /// Dispatch.
    pub dispatch: Callback<Action>,
}

impl PartialEq for DesignerProps {
    fn eq(&self, o: &Self) -> bool {
        let same = match (&self.design, &o.design) {
            (None, None) => true,
            (Some(a), Some(b)) => Rc::ptr_eq(a, b),
            _ => false,
        };
        same && self.hover == o.hover && self.theme == o.theme && self.seq == o.seq && self.link == o.link
    }
}

/// Scenes of one design: the merged diagram and the drawn tasks' diagrams.
struct Scenes {
    merged: Rc<Scene>,
    tasks: Vec<Rc<Scene>>,
}

/// The designer view.
#[function_component(DesignerView)]
pub fn designer_view(p: &DesignerProps) -> Html {
    let design_url = use_state(|| None::<String>);
    // The form starts from the design shown (a restored one included), else butterfly n=4.
    let draft = use_state(|| p.design.as_ref().map_or_else(Draft::default, |d| Draft::from_spec(&d.spec)));
    // Layouts, once per design (the layout crate, as in the order view).
    let scenes = {
        let design = p.design.clone();
        use_memo(p.seq, move |_| {
            design.map(|d| {
                let merged = layout(
                    &HasseInput { classes: &d.members, edges: d.derivation.edges(), labels: Some(&d.positions) },
                    &LayoutOptions::default(),
                );
                let small = LayoutOptions { engine: Engine::Layered, ..LayoutOptions::default() };
                let tasks = d
                    .derivation
                    .diagrams()
                    .iter()
                    .take(MAX_TASKS_DRAWN)
                    .enumerate()
                    .map(|(t, diag)| {
                        Rc::new(layout(&HasseInput::from_analysis(diag.analysis(), Some(&d.task_inputs[t])), &small))
                    })
                    .collect();
                Scenes { merged: Rc::new(merged), tasks }
            })
        })
    };

    let set = |f: fn(&mut Draft, &Event)| {
        let draft = draft.clone();
        Callback::from(move |e: Event| {
            let mut d = (*draft).clone();
            f(&mut d, &e);
            draft.set(d);
        })
    };
    let on_family = {
        let draft = draft.clone();
        Callback::from(move |e: Event| draft.set(Draft { family: select_value(&e), ..(*draft).clone() }))
    };
    let on_derive = {
        let (draft, d) = (draft.clone(), p.dispatch.clone());
        Callback::from(move |_: MouseEvent| d.emit(Action::Derive(draft.spec())))
    };
    let on_file = {
        let d = p.dispatch.clone();
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            if let Some(file) = input.files().and_then(|l| l.get(0)) {
                let name = file.name();
                let limit = hasseflow_core::format::MAX_INPUT_BYTES;
                if file.size() > limit as f64 {
                    d.emit(Action::Notify(
                        Level::Error,
                        format!("could not read {name}: it is over {} MB. Nothing was changed.", limit / 1_000_000),
                    ));
                } else {
                    let d = d.clone();
                    wasm_bindgen_futures::spawn_local(async move {
                        match io::read_file(file).await {
                            Ok(bytes) => d.emit(Action::Derive(FamilySpec::File { name, bytes })),
                            Err(e) => d.emit(Action::Notify(Level::Error, format!("could not read {name}: {e}"))),
                        }
                    });
                }
            }
            input.set_value("");
        })
    };
    let dr = &*draft;
    let fam = dr.family.as_str();
    let form = html! {
        <section class="panel family-form" aria-label="Task family">
            <div class="toolrow">
                <label>{"Family "}
                    <select id="family" onchange={on_family}>
                        <option value="autoregressive" selected={fam == "autoregressive"}>{"autoregressive"}</option>
                        <option value="block" selected={fam == "block"}>{"block generation"}</option>
                        <option value="butterfly" selected={fam == "butterfly"}>{"bidirectional fully supervised (butterfly)"}</option>
                        <option value="mae" selected={fam == "mae"}>{"masked autoencoding (MAE)"}</option>
                    </select>
                </label>
                <label>{"n "}<input id="family-n" type="number" min="1" value={dr.n.to_string()}
                    onchange={set(|d, e| d.n = input_value(e).trim().parse().unwrap_or(d.n))} /></label>
                if fam == "block" {
                    <label>{"block s "}<input id="family-block" type="number" min="1" value={dr.block.to_string()}
                        onchange={set(|d, e| d.block = input_value(e).trim().parse().unwrap_or(d.block))} /></label>
                    <label>{"prompt "}<input id="family-prompt" type="number" min="0" value={dr.prompt.to_string()}
                        onchange={set(|d, e| d.prompt = input_value(e).trim().parse().unwrap_or(d.prompt))} /></label>
                    <label><input id="family-clean-causal" type="checkbox" checked={dr.clean_causal}
                        onchange={set(|d, e| d.clean_causal = checked(e))} />{" causal inside clean blocks"}</label>
                    <label><input id="family-query-causal" type="checkbox" checked={dr.query_causal}
                        onchange={set(|d, e| d.query_causal = checked(e))} />{" causal inside mask blocks"}</label>
                    <label><input id="family-interleaved" type="checkbox" checked={dr.interleaved}
                        onchange={set(|d, e| d.interleaved = checked(e))} />{" interleaved order"}</label>
                }
                if fam == "mae" {
                    <label>{"span "}<input id="family-span" type="number" min="1" value={dr.span.to_string()}
                        onchange={set(|d, e| d.span = input_value(e).trim().parse().unwrap_or(d.span))} /></label>
                    <label>{"stride "}<input id="family-stride" type="number" min="0" value={dr.stride.to_string()}
                        onchange={set(|d, e| d.stride = input_value(e).trim().parse().unwrap_or(d.stride))} /></label>
                    <label><input id="family-causal-encoder" type="checkbox" checked={dr.causal_encoder}
                        onchange={set(|d, e| d.causal_encoder = checked(e))} />{" causal encoder"}</label>
                }
                if fam == "autoregressive" {
                    <label><input id="family-bidirectional" type="checkbox" checked={dr.bidirectional}
                        onchange={set(|d, e| d.bidirectional = checked(e))} />{" bidirectional tasks"}</label>
                    <label><input id="family-pad" type="checkbox" checked={dr.pad}
                        onchange={set(|d, e| d.pad = checked(e))} />{" pad"}</label>
                }
                if fam == "block" || fam == "butterfly" {
                    <label><input id="family-minimal" type="checkbox" checked={dr.minimal}
                        onchange={set(|d, e| d.minimal = checked(e))} />{" minimal layout"}</label>
                }
                if fam == "butterfly" {
                    <label><input id="family-mask-token" type="checkbox" checked={dr.mask_token}
                        onchange={set(|d, e| d.mask_token = checked(e))} />{" P_k holds m@k"}</label>
                    if !dr.mask_token {
                        <label>{"aggregate radius "}<input id="family-radius" type="number" min="1" value={dr.radius.to_string()}
                            onchange={set(|d, e| d.radius = input_value(e).trim().parse().unwrap_or(d.radius).max(1))} /></label>
                    }
                }
                <button type="button" id="derive" class="primary" onclick={on_derive}>{"Derive"}</button>
                <label class="button" for="family-file">{"Family file…"}</label>
                <input id="family-file" class="visually-hidden" type="file" accept=".json,application/json" onchange={on_file} />
            </div>
        </section>
    };

    let Some(design) = p.design.clone() else {
        return html! {
            <div class="designer" id="designer">
                { form }
                <p class="hint">{"Choose a family and press Derive: every task's Hasse diagram, the minimal merged task and its mask appear here."}</p>
            </div>
        };
    };
    let Some(scenes) = (*scenes).as_ref().map(|s| (s.merged.clone(), s.tasks.clone())) else { return html! {} };
    let (merged_scene, task_scenes) = scenes;
    let d = &design.derivation;
    let r = d.report();
    let on_hover = {
        let dsp = p.dispatch.clone();
        Callback::from(move |c| dsp.emit(Action::HoverMerged(c)))
    };
    // The hovered merged node's positions light up in the derived masks and the inputs row.
    let lit = p.hover.and_then(|h| design.members.get(h)).map(|m| Rc::new(m.clone()));
    let open = {
        let dsp = p.dispatch.clone();
        Callback::from(move |_: MouseEvent| dsp.emit(Action::OpenDerived))
    };
    let share = {
        let (dsp, link, url) = (p.dispatch.clone(), p.link.clone(), design_url.clone());
        Callback::from(move |_: MouseEvent| {
            let Ok(fragment) = link.clone() else { return };
            let full = io::url_with_fragment(&fragment);
            url.set(Some(full.clone()));
            let dsp = dsp.clone();
            wasm_bindgen_futures::spawn_local(async move {
                let text = match io::copy_text(full).await {
                    Ok(()) => "design link copied to the clipboard.",
                    Err(_) => "design link ready: copy it from the box.",
                };
                dsp.emit(Action::Notify(Level::Info, text.into()));
            });
        })
    };
    let export = {
        let (dsp, design) = (p.dispatch.clone(), design.clone());
        Callback::from(move |_: MouseEvent| {
            if let Err(e) = io::download_text(&design.to_json(), "hasseflow-derived.json", "application/json") {
                dsp.emit(Action::Notify(Level::Error, format!("download failed: {e}")));
            }
        })
    };
    let leaks = if r.leaks.is_empty() {
        "none".to_string()
    } else {
        let l = &r.leaks[0];
        format!("{} (first: {} at {} sees {} at {})", r.leaks.len(), l.label, l.position, l.via, l.via_position)
    };
    let yes = |b: bool| if b { "yes" } else { "no" };
    // (id, label, value, definition shown on hover; docs/THEORY.md §5 for the two densities).
    let stats: Vec<(&str, &str, String, &str)> = vec![
        ("tasks", "tasks", r.tasks.to_string(), "tasks of the family (padding tasks excluded)"),
        (
            "nodes",
            "nodes before → after",
            format!("{} → {}", r.nodes_before, r.nodes_after),
            "Hasse nodes of all tasks, and of the minimal merged task",
        ),
        ("positions", "positions", r.positions.to_string(), "positions of the merged task"),
        (
            "entries",
            "entries dense / sparse",
            format!("{} / {}", r.entries_dense, r.entries_sparse),
            "ones of the dense and of the sparse mask",
        ),
        (
            "supervision",
            "supervision density",
            format!("{:.1}% ({} / {} tokens)", 100.0 * r.supervision_density, r.target_tokens, r.sample_tokens),
            "distinct sample tokens that are prediction targets ÷ distinct sample tokens",
        ),
        (
            "loss-share",
            "loss position share",
            format!("{:.1}% ({} / {} positions)", 100.0 * r.loss_position_share, r.labelled_positions, r.positions),
            "positions that carry a loss ÷ positions (a compute measure)",
        ),
        (
            "depth",
            "L* dense / sparse",
            format!("{} / {}", design.depth.0, design.depth.1),
            "layers until the dense and the sparse mask reach their limit",
        ),
        ("leaks", "leaks", leaks, "labelled positions that see their own label"),
        ("minimal", "minimal", yes(r.minimal).into(), "every node from a task, no two equivalent"),
        (
            "consistent",
            "training = inference",
            yes(r.consistent).into(),
            "every labelled task node sees in the merged task exactly what it sees in its task",
        ),
    ];
    let total_tasks = d.family().tasks().len();
    let node_class = d.node_class();
    let tasks: Html = task_scenes
        .iter()
        .enumerate()
        .map(|(t, scene)| {
            let task = &d.family().tasks()[t];
            html! {
                <figure class="task" data-task={t.to_string()}>
                    <figcaption title={task.name.clone()}>{ format!("#{t} {}", task.name) }</figcaption>
                    <IoRow inputs={design.task_inputs[t].clone()} labels={design.task_labels[t].clone()} />
                    <div class="task-body">
                        <MaskCanvas mask={Rc::new(task.mask.clone())} px={96.0} theme={p.theme} />
                        <MiniHasse scene={scene.clone()} colour={Rc::new(node_class[t].clone())} hover={p.hover}
                            on_hover={on_hover.clone()} width={260.0} height={190.0} served={None::<Rc<Vec<String>>>} />
                    </div>
                </figure>
            }
        })
        .collect();
    let served: Rc<Vec<String>> = Rc::new((0..design.members.len()).map(|c| design.served_text(c)).collect());
    let identity: Rc<Vec<usize>> = Rc::new((0..design.members.len()).collect());
    // Tall diagrams (large n) get room to stay readable; the page scrolls.
    let merged_height = (merged_scene.height * 0.8 + 40.0).clamp(380.0, 1400.0);
    let dense = Rc::new(d.dense().clone());
    let sparse = Rc::new(d.sparse().clone());
    html! {
        <div class="designer" id="designer">
            { form }
            <div class="design-top">
                <section class="panel" aria-label="Derivation report">
                    <span class="title" id="design-family">{ r.family.clone() }</span>
                    <dl class="stats" id="design-report">
                        { for stats.into_iter().map(|(id, label, value, what)| html! {
                            <div class="stat" title={what}><dt>{ label }</dt><dd id={format!("design-{id}")}>{ value }</dd></div>
                        }) }
                    </dl>
                    <p class="timing" id="design-time" data-ms={format!("{:.1}", design.millis)} data-seq={p.seq.to_string()}>
                        { format!("family + derivation {:.1} ms (wasm)", design.millis) }</p>
                    <div class="toolrow">
                        <button type="button" id="open-derived" class="primary" onclick={open}>{"Open in editor"}</button>
                        <button type="button" id="share-design" onclick={share} disabled={p.link.is_err()}
                            title={p.link.clone().err().unwrap_or_else(|| "a link that derives this family again".into())}>{"Share link"}</button>
                        <button type="button" id="export-derived" onclick={export}
                            title="the derive --json object: report, mask, sparse_mask, positions (inputs), labels">{"Export derived task (JSON)"}</button>
                    </div>
                    if let Some(url) = (*design_url).clone() {
                        <label class="share">{"Link "}<input id="design-url" type="text" readonly=true value={url} /></label>
                    }
                </section>
                <section class="panel merged" aria-label="Minimal merged task">
                    <span class="title">{ format!("Minimal merged task: {} nodes → {}", r.nodes_before, r.nodes_after) }</span>
                    <MiniHasse scene={merged_scene} colour={identity} hover={p.hover} on_hover={on_hover.clone()}
                        width={560.0} height={merged_height} served={Some(served)} id={Some(AttrValue::from("merged-hasse"))} />
                </section>
            </div>
            <section class="panel derived" aria-label="Derived mask">
                <span class="title">{"Derived mask: inputs and labels above, dense M* and sparse side by side"}</span>
                <IoRow inputs={design.positions.clone()} labels={design.labels.clone()} id={Some(AttrValue::from("derived-io"))} lit={lit.clone()} />
                <div class="derived-masks">
                    <figure>
                        <MaskCanvas mask={dense} px={300.0} theme={p.theme} id={Some(AttrValue::from("derived-dense"))} lit={lit.clone()} />
                        <figcaption id="derived-dense-caption">{ format!("dense: {} entries, L* = {}", r.entries_dense, design.depth.0) }</figcaption>
                    </figure>
                    <figure>
                        <MaskCanvas mask={sparse} px={300.0} theme={p.theme} id={Some(AttrValue::from("derived-sparse"))} lit={lit} />
                        <figcaption id="derived-sparse-caption">{ format!("sparse: {} entries, L* = {}", r.entries_sparse, design.depth.1) }</figcaption>
                    </figure>
                </div>
            </section>
            <section class="panel" aria-label="Tasks">
                <span class="title">{ format!("The {total_tasks} tasks (colour = equivalent nodes; hover one to light up its equivalents)") }</span>
                if total_tasks > MAX_TASKS_DRAWN {
                    <p class="note" id="tasks-note">{ format!("Showing the first {MAX_TASKS_DRAWN} of {total_tasks} tasks.") }</p>
                }
                <div class="tasks" id="tasks">{ tasks }</div>
            </section>
        </div>
    }
}

/// Inputs/labels row properties.
#[derive(Properties, PartialEq, Clone)]
pub struct IoRowProps {
    /// Input text per position.
    pub inputs: Vec<String>,
    /// Label text per position.
    pub labels: Vec<Option<String>>,
    /// Element id.
    #[prop_or_default]
    pub id: Option<AttrValue>,
    /// Positions to highlight (the hovered merged node's members).
    #[prop_or_default]
    pub lit: Option<Rc<Vec<usize>>>,
}

/// One column per position: its input above its label (text only).
#[function_component(IoRow)]
pub fn io_row(p: &IoRowProps) -> Html {
    let lit = |i: usize| p.lit.as_ref().is_some_and(|l| l.contains(&i)).then_some("lit");
    html! {
        <div class="io-row" id={p.id.clone()}>
            <table>
                <tr class="inputs"><th>{"in"}</th>{ for p.inputs.iter().enumerate().map(|(i, t)| html! {
                    <td class={classes!(lit(i))}>{ t.clone() }</td> }) }</tr>
                <tr class="labels"><th>{"label"}</th>{ for p.labels.iter().enumerate().map(|(i, l)| html! {
                    <td class={classes!(lit(i))}>{ l.clone().unwrap_or_else(|| "·".into()) }</td>
                }) }</tr>
            </table>
        </div>
    }
}

/// Mask canvas properties.
#[derive(Properties, Clone)]
pub struct MaskCanvasProps {
    /// The mask.
    pub mask: Rc<BitMatrix>,
    /// CSS size (square).
    pub px: f64,
    /// Theme.
    pub theme: Theme,
    /// Element id (the canvas also carries its rows in `data-rows`, for tests).
    #[prop_or_default]
    pub id: Option<AttrValue>,
    /// Positions whose rows and columns are highlighted (listed in `data-lit`).
    #[prop_or_default]
    pub lit: Option<Rc<Vec<usize>>>,
}

impl PartialEq for MaskCanvasProps {
    fn eq(&self, o: &Self) -> bool {
        *self.mask == *o.mask && self.px == o.px && self.theme == o.theme && self.id == o.id && self.lit == o.lit
    }
}

/// A small read-only mask: set cells in ink, row `q` reads column `k`.
#[function_component(MaskCanvas)]
pub fn mask_canvas(p: &MaskCanvasProps) -> Html {
    let node = use_node_ref();
    {
        let (node, p) = (node.clone(), p.clone());
        use_effect_with(p.clone(), move |_| {
            let Some(canvas) = node.cast::<HtmlCanvasElement>() else { return };
            let Some(ctx) =
                canvas.get_context("2d").ok().flatten().and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
            else {
                return;
            };
            let pal = Palette::of(p.theme);
            let scale = f64::from(canvas.width()) / p.px;
            let _ = ctx.set_transform(scale, 0.0, 0.0, scale, 0.0, 0.0);
            ctx.set_fill_style_str(pal.background_css);
            ctx.fill_rect(0.0, 0.0, p.px, p.px);
            let n = p.mask.n().max(1);
            let s = p.px / n as f64;
            ctx.set_fill_style_str(pal.accent_css);
            for q in 0..p.mask.n() {
                for k in p.mask.row_ones(q) {
                    ctx.fill_rect(k as f64 * s, q as f64 * s, s.max(0.5), s.max(0.5));
                }
            }
            if let Some(lit) = &p.lit {
                // The hovered node's rows (what it reads) and columns (who reads it).
                ctx.set_fill_style_str(pal.highlight_css);
                for &i in lit.iter().filter(|&&i| i < n) {
                    ctx.fill_rect(0.0, i as f64 * s, p.px, s.max(0.5));
                    ctx.fill_rect(i as f64 * s, 0.0, s.max(0.5), p.px);
                }
            }
            if s >= 6.0 {
                ctx.set_stroke_style_str(pal.gridline_css);
                ctx.set_line_width(0.5);
                ctx.begin_path();
                for i in 0..=n {
                    let t = i as f64 * s;
                    ctx.move_to(t, 0.0);
                    ctx.line_to(t, p.px);
                    ctx.move_to(0.0, t);
                    ctx.line_to(p.px, t);
                }
                ctx.stroke();
            }
        });
    }
    let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio()).max(1.0);
    let px = (p.px * dpr).round() as u32;
    let rows = p.id.as_ref().map(|_| p.mask.to_row_strings().join(","));
    let lit = p.lit.as_ref().map(|l| l.iter().map(usize::to_string).collect::<Vec<_>>().join(","));
    html! {
        <canvas ref={node} id={p.id.clone()} class="mask-canvas" data-rows={rows} data-lit={lit} width={px.to_string()} height={px.to_string()}
            data-px={p.px.to_string()} role="img"
            aria-label={format!("{} x {} mask", p.mask.n(), p.mask.n())} />
    }
}

/// Small Hasse diagram properties.
#[derive(Properties, Clone)]
pub struct MiniHasseProps {
    /// The laid-out diagram.
    pub scene: Rc<Scene>,
    /// Merged node of each node (colour and hover identity).
    pub colour: Rc<Vec<usize>>,
    /// Hovered merged node.
    pub hover: Option<usize>,
    /// Hover callback (merged node).
    pub on_hover: Callback<Option<usize>>,
    /// CSS width.
    pub width: f64,
    /// CSS height.
    pub height: f64,
    /// A second line under each node (the tasks a merged node serves).
    pub served: Option<Rc<Vec<String>>>,
    /// Element id.
    #[prop_or_default]
    pub id: Option<AttrValue>,
}

impl PartialEq for MiniHasseProps {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.scene, &o.scene) && self.colour == o.colour && self.hover == o.hover
    }
}

/// A Hasse diagram fitted into a box; nodes filled by merged node, minimal ones at the bottom.
#[function_component(MiniHasse)]
pub fn mini_hasse(p: &MiniHasseProps) -> Html {
    let s = &p.scene;
    let pad = 14.0;
    let view_box = format!("{:.1} {:.1} {:.1} {:.1}", -pad, -pad, s.width + 2.0 * pad, s.height + 2.0 * pad + 12.0);
    let merged = |c: usize| p.colour.get(c).copied().unwrap_or(c);
    let edges: Html = s
        .edges
        .iter()
        .map(|e| {
            let lit = p.hover.is_some_and(|h| merged(e.lower) == h || merged(e.upper) == h);
            html! { <path class={classes!("edge", lit.then_some("lit"))} d={e.path.svg_d()} /> }
        })
        .collect();
    let nodes: Html = s
        .nodes
        .iter()
        .map(|n| {
            let m = merged(n.class);
            let lit = p.hover == Some(m);
            let class = classes!("node", lit.then_some("equiv"), (p.hover.is_some() && !lit).then_some("dim"));
            let enter = {
                let cb = p.on_hover.clone();
                Callback::from(move |_: PointerEvent| cb.emit(Some(m)))
            };
            let leave = {
                let cb = p.on_hover.clone();
                Callback::from(move |_: PointerEvent| cb.emit(None))
            };
            let served = p.served.as_ref().and_then(|v| v.get(n.class)).cloned();
            let title = match &served {
                Some(sv) => format!("{} — serves {sv}", n.full),
                None => n.full.clone(),
            };
            html! {
                <g class={class} data-merged={m.to_string()} onpointerenter={enter} onpointerleave={leave}>
                    <title>{ title }</title>
                    <rect x={format!("{:.1}", n.x - n.w / 2.0)} y={format!("{:.1}", n.y - n.h / 2.0)}
                        width={format!("{:.1}", n.w)} height={format!("{:.1}", n.h)} rx="5" fill={node_fill(m)} />
                    <text x={format!("{:.1}", n.x)} y={format!("{:.1}", n.y)} text-anchor="middle" dominant-baseline="central">
                        { n.caption.clone() }
                    </text>
                    if let Some(sv) = served {
                        <text class="served" x={format!("{:.1}", n.x)} y={format!("{:.1}", n.y + n.h / 2.0 + 9.0)} text-anchor="middle">
                            { sv }
                        </text>
                    }
                </g>
            }
        })
        .collect();
    html! {
        <svg id={p.id.clone()} class="mini-hasse" width={p.width.to_string()} height={p.height.to_string()} viewBox={view_box}
            preserveAspectRatio="xMidYMid meet" role="img" aria-label="Hasse diagram: information flows up">
            <g class="edges">{ edges }</g>
            <g class="nodes">{ nodes }</g>
        </svg>
    }
}
