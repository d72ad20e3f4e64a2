//! The Editor view: tools, presets and files | the grid with its hover line, the introduction
//! and block statistics | the side panel (statistics, the layer control, and the order of the
//! limit or the Flow view). All three fit one screen at 1440×900.

use std::rc::Rc;

use hasseflow_render::Scene;
use yew::prelude::*;

use super::files::FilesPanel;
use super::flow::FlowPanel;
use super::form::on_click;
use super::grid::Grid;
use super::intro::Intro;
use super::order::OrderDiagram;
use super::palette::Theme;
use super::panels::{BlocksPanel, LayerControl, PresetPicker, Stats, Tools};
use crate::state::{Action, AppState, EditAction, FlowAction, FlowStatus, OrderView, SideView, ViewAction};
use crate::ui::store::{Store, use_groups};

/// Most comparable pairs the full-order view draws.
const FULL_EDGE_LIMIT: usize = 5000;

/// Editor view properties.
#[derive(Properties, PartialEq, Clone)]
pub struct EditorProps {
    /// The store.
    pub store: Store,
    /// The Hasse layout of the current revision.
    pub scene: Rc<Scene>,
    /// Colour theme.
    pub theme: Theme,
    /// Whether the introduction is open.
    pub intro_open: bool,
    /// Closes the introduction.
    pub on_close_intro: Callback<MouseEvent>,
    /// The latest share link (kept by the app across views).
    pub share_url: UseStateHandle<Option<String>>,
    /// Dispatch.
    pub dispatch: Callback<Action>,
}

/// The Editor view.
#[function_component(EditorView)]
pub fn editor_view(p: &EditorProps) -> Html {
    let state = &p.store;
    let dispatch = &p.dispatch;
    let groups = use_groups(dispatch);
    let (on_edit, on_import) = (groups.edit.clone(), groups.import.clone());
    let (on_view, on_flow) = (groups.view.clone(), groups.flow.clone());
    let canvas_ref = use_node_ref();
    let cb = |f: fn((usize, usize)) -> EditAction| {
        let d = on_edit.clone();
        Callback::from(move |c| d.emit(f(c)))
    };
    let on_stroke_start = cb(|(q, k)| EditAction::StrokeStart(q, k));
    let on_stroke_move = cb(|(q, k)| EditAction::StrokeMove(q, k));
    let on_stroke_end = {
        let d = on_edit.clone();
        Callback::from(move |()| d.emit(EditAction::StrokeEnd))
    };
    let on_stroke_cancel = {
        let d = on_edit.clone();
        Callback::from(move |()| d.emit(EditAction::StrokeCancel))
    };
    let on_hover = {
        let d = on_view.clone();
        Callback::from(move |c| d.emit(ViewAction::HoverCell(c)))
    };
    let n = state.n();
    html! {
        <div class="columns">
            <aside class="left" aria-label="Editing, presets and files">
                <Tools tool={state.editor.tool} n={n} can_undo={state.can_undo()} can_redo={state.can_redo()}
                    sparsify={state.editor.sparsify} {on_edit} />
                <PresetPicker on_import={on_import.clone()} />
                <FilesPanel store={p.store.clone()} scene={p.scene.clone()} theme={p.theme} canvas_ref={canvas_ref.clone()}
                    share_url={p.share_url.clone()} {on_import} on_view={on_view.clone()} />
            </aside>
            <section class="center" aria-label="Mask">
                <Grid mask={state.editor.doc.mask.clone()} derived={state.editor.derived.clone()} labels={state.editor.doc.labels.clone()} revision={state.editor.revision}
                    layer={state.editor.layer} hover={state.editor.hover_cell} hover_class={state.editor.hover_class} theme={p.theme}
                    {on_stroke_start} {on_stroke_move} {on_stroke_end} {on_stroke_cancel} {on_hover} canvas_ref={canvas_ref.clone()}
                    blocks={state.editor.show_blocks.then(|| state.editor.blocks.clone())} />
                <p id="hover" class="hover" aria-live="polite">{ hover_sentence(state) }</p>
                if p.intro_open {
                    <Intro dispatch={dispatch.clone()} on_close={p.on_close_intro.clone()} />
                }
                <BlocksPanel stats={state.editor.blocks.clone()} show={state.editor.show_blocks} flash={state.editor.derived.flash.clone()}
                    flashmask={state.editor.derived.flashmask.clone()} on_view={on_view.clone()} />
            </section>
            // The layer control and the order (or flow) view sit beside the grid, so the three
            // are seen together without scrolling at 1440 x 900.
            <SidePanel store={p.store.clone()} scene={p.scene.clone()} theme={p.theme} {on_view} {on_flow} />
        </div>
    }
}

/// Side panel properties.
#[derive(Properties, PartialEq, Clone)]
pub struct SideProps {
    /// The store.
    pub store: Store,
    /// The Hasse layout of the current revision.
    pub scene: Rc<Scene>,
    /// Colour theme.
    pub theme: Theme,
    /// The layer, the side view, hover, the order view.
    pub on_view: Callback<ViewAction>,
    /// The Flow view's settings, map and retry.
    pub on_flow: Callback<FlowAction>,
}

/// Beside the grid: the statistics, the layer control, and the order of the limit or the Flow
/// view.
#[function_component(SidePanel)]
pub fn side_panel(p: &SideProps) -> Html {
    let state = &p.store;
    let (on_view, on_flow) = (p.on_view.clone(), p.on_flow.clone());
    // The statistics, once per revision (and once more when a stroke's deferred width arrives).
    let (stats, growth) = {
        let s = p.store.clone();
        let (stats, growth) = &*use_memo((state.editor.revision, state.editor.derived.pending), move |_| stats_of(&s));
        (stats.clone(), growth.clone())
    };
    let flow_key = state.flow_key();
    let flow_pending =
        state.flow.current(flow_key).is_none() && !matches!(state.flow.status_for(flow_key), FlowStatus::Failed(_));
    let set_side = |v: SideView| on_click(&on_view, ViewAction::SetSideView(v));
    html! {
        <aside class="right" aria-label="Layers and the order of the limit">
            <Stats rows={stats} />
            <LayerControl layer={state.editor.layer} depth={state.editor.derived.analysis.depth()} max={state.max_layer()} growth={growth}
                playing={state.editor.playing} theme={p.theme} on_view={on_view.clone()} />
            <div class="segmented side" role="tablist" aria-label="Beside the grid">
                <button type="button" id="side-order" role="tab" aria-selected={(state.side == SideView::Order).to_string()}
                onclick={set_side(SideView::Order)}>{"Order"}</button>
                <button type="button" id="side-flow" role="tab" aria-selected={(state.side == SideView::Flow).to_string()}
                onclick={set_side(SideView::Flow)}
                    title="masked-attention forward passes of a random Transformer: measured influence beside R(L)">{"Flow"}</button>
            </div>
            if state.side == SideView::Flow {
                <FlowPanel settings={state.flow.settings} outcome={state.flow.current(flow_key).cloned()}
                    status={state.flow.status_for(flow_key)} pending={flow_pending} layer={state.flow_layer()} n={state.n()}
                    hover={state.editor.hover_cell} theme={p.theme} dropped={state.flow.run.dropped} map={state.flow.map}
                    stack_layers={state.editor.doc.stack.as_ref().map(|st| st.0.layers().len())} {on_flow} {on_view} />
            } else {
                <OrderPanel store={p.store.clone()} scene={p.scene.clone()} {on_view} />
            }
        </aside>
    }
}

/// The statistics rows and the growth curve of the current mask.
type StatRows = (Rc<Vec<(&'static str, &'static str, String)>>, Rc<Vec<usize>>);

fn stats_of(state: &AppState) -> StatRows {
    let a = &state.editor.derived.analysis;
    let n = state.n();
    let entries = state.editor.doc.mask.count_ones();
    let rows = vec![
        ("n", "N", n.to_string()),
        ("entries", "entries", entries.to_string()),
        ("density", "density", format!("{:.1}%", 100.0 * entries as f64 / (n * n) as f64)),
        ("dense", "dense", if a.is_dense() { "yes".into() } else { "no".into() }),
        ("depth", "L*", a.depth().to_string()),
        ("classes", "classes", a.classes().len().to_string()),
        ("edges", "Hasse edges", a.hasse_edges().len().to_string()),
        ("height", "height", a.height().to_string()),
        (
            "width",
            "width",
            if state.editor.derived.pending { "…".to_string() } else { state.editor.derived.width.to_string() },
        ),
    ];
    (Rc::new(rows), Rc::new(a.growth().to_vec()))
}

/// Order panel properties.
#[derive(Properties, PartialEq, Clone)]
pub struct OrderPanelProps {
    /// The store.
    pub store: Store,
    /// The Hasse layout of the current revision.
    pub scene: Rc<Scene>,
    /// The order view and the hovered class.
    pub on_view: Callback<ViewAction>,
}

/// The order of the limit: the Hasse diagram or the full order, lit along the hovered cell's
/// path or below the hovered class.
#[function_component(OrderPanel)]
pub fn order_panel(p: &OrderPanelProps) -> Html {
    let state = &p.store;
    let full = {
        let derived = state.editor.derived.clone();
        use_memo((state.editor.revision, state.editor.order_view), move |(_, view)| {
            if *view != OrderView::Full {
                return (Rc::new(Vec::new()), false);
            }
            let (pairs, cut) = derived.analysis.comparable_pairs(FULL_EDGE_LIMIT);
            (Rc::new(pairs), cut)
        })
    };
    let lit = {
        let s = p.store.clone();
        use_memo((state.editor.revision, state.editor.hover_cell, state.editor.hover_class), move |_| {
            Rc::new(s.order_lit())
        })
    };
    let set_view = |v: OrderView| on_click(&p.on_view, ViewAction::SetOrderView(v));
    let on_hover_class = {
        let d = p.on_view.clone();
        Callback::from(move |c| d.emit(ViewAction::HoverClass(c)))
    };
    html! {
        <section class="panel order" aria-label="Order view">
            <div class="toolrow">
                <span class="title">{"Order of the limit"}</span>
                <div class="segmented" role="group" aria-label="Relation drawn">
                    <button type="button" id="view-hasse" aria-pressed={(state.editor.order_view == OrderView::Hasse).to_string()}
                        onclick={set_view(OrderView::Hasse)}>{"Hasse"}</button>
                    <button type="button" id="view-full" aria-pressed={(state.editor.order_view == OrderView::Full).to_string()}
                        onclick={set_view(OrderView::Full)}>{"Full order"}</button>
                </div>
            </div>
            <OrderDiagram scene={p.scene.clone()} full_edges={full.0.clone()} full_truncated={full.1}
                view={state.editor.order_view} lit={(*lit).clone()} hover_class={state.editor.hover_class} {on_hover_class} />
        </section>
    }
}

/// The hovered cell in words.
fn hover_sentence(s: &AppState) -> String {
    let a = &s.editor.derived.analysis;
    if s.editor.hover_cell.is_none()
        && let Some(c) = s.editor.hover_class.filter(|&c| c < a.classes().len())
    {
        let members = &a.classes()[c];
        let rep = members[0];
        let sees = a.down_set(c).len();
        let seen_by = a.seen_by(c);
        let who = if members.len() == 1 { format!("position {rep}") } else { format!("{} positions", members.len()) };
        return format!(
            "class {c} ({who}) sees {sees} position{} in the limit and is seen by {seen_by}.",
            if sees == 1 { "" } else { "s" }
        );
    }
    let Some((q, k)) = s.editor.hover_cell.filter(|&(q, k)| q < s.n() && k < s.n()) else {
        return "Hover a cell: row q is a query, column k a key; a set cell means q attends to k.".into();
    };
    let name = |p: usize| match s.editor.doc.labels.as_ref().and_then(|l| l.get(p)) {
        Some(l) => format!("position {p} (“{l}”)"),
        None => format!("position {p}"),
    };
    let reads = if s.editor.doc.mask.get(q, k) {
        format!("{} attends to {}", name(q), name(k))
    } else if q == k {
        format!("{} keeps its own state through the residual", name(q))
    } else {
        format!("{} does not attend to {}", name(q), name(k))
    };
    let reach = match s.editor.derived.first_reach.get(q, k) {
        Some(0) => "; reached at layer 0 (itself)".to_string(),
        Some(d) => format!("; first reached at layer {d}"),
        None => format!("; never reached: {q} does not see {k} in the limit"),
    };
    format!("{reads}{reach}.")
}
