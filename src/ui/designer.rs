//! The designer view: choose a task family and its options, derive it (the reducer runs the core's
//! pipeline), and see every task (mask, inputs/labels, Hasse diagram), the minimal merged task's
//! diagram with the tasks each node serves, and the derived dense and sparse masks. Equivalent
//! nodes share a colour; hovering one lights up all its equivalents. Drawing only: the
//! derivation and everything it implies come from [`Design`].
//!
//! The family form is [`family`], the small drawings (inputs/labels row, mask canvas, Hasse
//! diagram) [`drawing`]; this module lays out the results: report, merged task, masks, tasks.

use std::rc::Rc;

use hasseflow_render::{Engine, HasseInput, LayoutOptions, Scene, layout};
use yew::prelude::*;

use hasseflow_core::derive;

use super::form::on_click;
use super::palette::Theme;
use super::{io, lazy};
use crate::state::{Action, Design, DesignerAction, FamilySpec, Level, MAX_TASKS_DRAWN, ViewAction};
use crate::ui::store::use_groups;

mod drawing;
mod family;

use drawing::{IoRow, MaskCanvas, MiniHasse};
use family::FamilyForm;

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
    /// The family being derived while the lazily loaded module answers, in a few words.
    pub deriving: Option<String>,
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
        same && self.hover == o.hover && self.theme == o.theme && self.seq == o.seq && self.deriving == o.deriving
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
    let groups = use_groups(&p.dispatch);
    let (on_designer, on_view) = (groups.designer.clone(), groups.view.clone());
    // Layouts, once per design (the layout crate, as in the order view).
    let scenes = {
        let design = p.design.clone();
        use_memo(p.seq, move |_| {
            design.map(|d| {
                let v = &d.view;
                let merged = layout(
                    &HasseInput { classes: &v.members, edges: &v.edges, labels: Some(&v.positions) },
                    &LayoutOptions::default(),
                );
                let small = LayoutOptions { engine: Engine::Layered, ..LayoutOptions::default() };
                let tasks = v
                    .tasks
                    .iter()
                    .take(MAX_TASKS_DRAWN)
                    .map(|t| {
                        let input = HasseInput { classes: &t.classes, edges: &t.hasse, labels: Some(&t.inputs) };
                        Rc::new(layout(&input, &small))
                    })
                    .collect();
                Scenes { merged: Rc::new(merged), tasks }
            })
        })
    };

    // The form starts from the built-in family shown (a restored one included), else butterfly n=4.
    let shown = p.design.as_ref().and_then(|d| match &d.spec {
        FamilySpec::Builtin(b) => Some(*b),
        FamilySpec::File { .. } => None,
    });
    let form = html! { <FamilyForm shown={shown} on_designer={on_designer.clone()} on_view={on_view.clone()} /> };
    // The pipeline is fetched on first use: the view says so until the answer comes.
    let form = html! {
        <>
            { form }
            if let Some(what) = &p.deriving {
                <p class="models-status" id="design-deriving" role="status"><progress aria-label="deriving" />
                    { format!(" deriving {what}: loading the Designer's module…") }</p>
            }
        </>
    };

    let Some(design) = p.design.clone() else {
        return html! {
            <div class="designer" id="designer">
                { form }
                if p.deriving.is_none() {
                    <p class="hint">{"Choose a family and press Derive: every task's Hasse diagram, the minimal merged task and its mask appear here."}</p>
                }
            </div>
        };
    };
    let Some(scenes) = (*scenes).as_ref().map(|s| (s.merged.clone(), s.tasks.clone())) else { return html! {} };
    let (merged_scene, task_scenes) = scenes;
    let d = &design.view;
    let r = &d.report;
    let on_hover = on_designer.reform(DesignerAction::HoverMerged);
    // The hovered merged node's positions light up in the derived masks and the inputs row.
    let lit = p.hover.and_then(|h| d.members.get(h)).map(|m| Rc::new(m.clone()));
    let total_tasks = d.task_names.len();
    let tasks: Html = task_scenes
        .iter()
        .zip(&d.tasks)
        .zip(&d.task_names)
        .enumerate()
        .map(|(t, ((scene, task), name))| {
            html! {
                <figure class="task" data-task={t.to_string()}>
                    <figcaption title={name.clone()}>{ format!("#{t} {name}") }</figcaption>
                    <IoRow inputs={task.inputs.clone()} labels={task.labels.clone()} />
                    <div class="task-body">
                        <MaskCanvas mask={Rc::new(task.mask.clone())} px={96.0} theme={p.theme} />
                        <MiniHasse scene={scene.clone()} colour={Rc::new(task.merged.clone())} hover={p.hover}
                            on_hover={on_hover.clone()} width={260.0} height={190.0} served={None::<Rc<Vec<String>>>} />
                    </div>
                </figure>
            }
        })
        .collect();
    let served: Rc<Vec<String>> = Rc::new((0..d.members.len()).map(|c| design.served_text(c)).collect());
    let identity: Rc<Vec<usize>> = Rc::new((0..d.members.len()).collect());
    // Tall diagrams (large n) get room to stay readable; the page scrolls.
    let merged_height = (merged_scene.height * 0.8 + 40.0).clamp(380.0, 1400.0);
    let dense = Rc::new(d.dense.clone());
    let sparse = Rc::new(d.sparse.clone());
    html! {
        <div class="designer" id="designer">
            { form }
            <div class="design-top">
                <DesignReport design={design.clone()} seq={p.seq} {on_designer} {on_view} />
                <section class="panel merged" aria-label="Minimal merged task">
                    <span class="title">{ format!("Minimal merged task: {} nodes → {}", r.nodes_before, r.nodes_after) }</span>
                    <MiniHasse scene={merged_scene} colour={identity} hover={p.hover} on_hover={on_hover.clone()}
                        width={560.0} height={merged_height} served={Some(served)} id={Some(AttrValue::from("merged-hasse"))} />
                </section>
            </div>
            <section class="panel derived" aria-label="Derived mask">
                <span class="title">{"Derived mask: inputs and labels above, dense M* and sparse side by side"}</span>
                <IoRow inputs={d.positions.clone()} labels={d.labels.clone()} id={Some(AttrValue::from("derived-io"))} lit={lit.clone()} />
                <div class="derived-masks">
                    <figure>
                        <MaskCanvas mask={dense} px={300.0} theme={p.theme} id={Some(AttrValue::from("derived-dense"))} lit={lit.clone()} />
                        <figcaption id="derived-dense-caption">{ format!("dense: {} entries, L* = {}", r.entries_dense, r.depth_dense) }</figcaption>
                    </figure>
                    <figure>
                        <MaskCanvas mask={sparse} px={300.0} theme={p.theme} id={Some(AttrValue::from("derived-sparse"))} lit={lit} />
                        <figcaption id="derived-sparse-caption">{ format!("sparse: {} entries, L* = {}", r.entries_sparse, r.depth_sparse) }</figcaption>
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

/// [`DesignReport`] properties.
#[derive(Properties, Clone)]
struct ReportProps {
    design: Rc<Design>,
    seq: u64,
    on_designer: Callback<DesignerAction>,
    on_view: Callback<ViewAction>,
}

impl PartialEq for ReportProps {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.design, &o.design) && self.seq == o.seq
    }
}

/// The derivation report: figures with their definitions, Open in editor, the design link and the
/// JSON export.
#[function_component(DesignReport)]
fn design_report(p: &ReportProps) -> Html {
    let design_url = use_state(|| None::<String>);
    let design = p.design.clone();
    let r = &design.view.report;
    let open = on_click(&p.on_designer, DesignerAction::OpenDerived);
    let share = {
        let (dsp, link, url) = (p.on_view.clone(), design.link.clone(), design_url.clone());
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
                dsp.emit(ViewAction::Notify(Level::Info, text.into()));
            });
        })
    };
    // The pipeline loads on first use (the Designer module, which derived this design): the
    // request is made now, and the download follows the answer.
    let export = {
        let (dsp, design) = (p.on_view.clone(), design.clone());
        Callback::from(move |_: MouseEvent| {
            let (dsp, request) = (dsp.clone(), design.export_request());
            wasm_bindgen_futures::spawn_local(async move {
                let r = lazy::derive(request)
                    .await
                    .map_err(|e| format!("the Designer's module did not load ({e})"))
                    .and_then(|a| derive::wire::read_json(&a))
                    .and_then(|json| io::download_text(&json, "hasseflow-derived.json", "application/json"));
                if let Err(e) = r {
                    dsp.emit(ViewAction::Notify(Level::Error, format!("export failed: {e}")));
                }
            });
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
            format!("{} / {}", r.depth_dense, r.depth_sparse),
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
    html! {
        <section class="panel" aria-label="Derivation report">
            <span class="title" id="design-family">{ r.family.clone() }</span>
            <dl class="stats" id="design-report">
                { for stats.into_iter().map(|(id, label, value, what)| html! {
                    <div class="stat" title={what}><dt>{ label }</dt><dd id={format!("design-{id}")}>{ value }</dd></div>
                }) }
            </dl>
            <p class="timing" id="design-time" data-ms={format!("{:.1}", design.millis)} data-seq={p.seq.to_string()}
                title="from the request to the answer: the first derivation includes loading the Designer's module">
                { format!("derived in {:.1} ms (wasm)", design.millis) }</p>
            <div class="toolrow">
                <button type="button" id="open-derived" class="primary" onclick={open}>{"Open in editor"}</button>
                <button type="button" id="share-design" onclick={share} disabled={design.link.is_err()}
                    title={design.link.as_ref().err().map_or_else(|| "a link that derives this family again".to_string(), ToString::to_string)}>{"Share link"}</button>
                <button type="button" id="export-derived" onclick={export}
                    title="the derive --json object: report, mask, sparse_mask, positions (inputs), labels">{"Export derived task (JSON)"}</button>
            </div>
            if let Some(url) = (*design_url).clone() {
                <label class="share">{"Link "}<input id="design-url" type="text" readonly=true value={url} /></label>
            }
        </section>
    }
}
