//! The Yew shell (wasm only): `<App>` owns the one store (`use_reducer` over
//! [`AppState`](crate::state::AppState)), runs the IO effects (autosave, share links, keyboard,
//! animation timer, files), memoises heavy derived data per revision (the Hasse layout), and
//! lays out small presentational components.

mod designer;
mod flow;
mod form;
mod grid;
mod intro;
mod io;
mod models;
mod order;
mod palette;
mod panels;
mod paste;

use std::rc::Rc;

use hasseflow_core::format::{Encoding, write_json};
use hasseflow_core::interop::ExportKind;
use hasseflow_render::{Engine, HasseInput, LayoutOptions, Scene, SvgTheme, layout, to_svg};
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use yew::prelude::*;

use crate::state::{Action, AppState, Level, OrderView, SideView, View};
use designer::DesignerView;
use flow::FlowPanel;
use grid::Grid;
use intro::Intro;
use order::OrderDiagram;
use palette::Theme;
use panels::{BlocksPanel, LayerControl, PresetPicker, Stats, Tools};
use paste::PasteImport;

impl Reducible for AppState {
    type Action = Action;
    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut next = Rc::unwrap_or_clone(self);
        next.apply(action);
        Rc::new(next)
    }
}

/// Most comparable pairs the full-order view draws.
const FULL_EDGE_LIMIT: usize = 5000;

/// The Hasse layout of one revision and how long it took.
struct Laid {
    scene: Rc<Scene>,
    millis: f64,
}

fn initial_theme() -> Theme {
    let dark = web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches());
    if dark { Theme::Dark } else { Theme::Light }
}

/// The application.
#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(|| AppState::new(AppState::initial_document(), io::now));
    let theme = use_state(initial_theme);
    let share_url = use_state(|| None::<String>);
    // The first-visit introduction, until closed (remembered in localStorage).
    let intro_open = use_state(|| !io::intro_closed());
    let canvas_ref = use_node_ref();
    // `?layout=layout-rs|layered` forces an engine (for measuring); the default picks by size.
    let layout_options = use_state(|| LayoutOptions {
        engine: match io::query_param("layout").as_deref() {
            Some("layout-rs") => Engine::LayoutRs,
            Some("layered") => Engine::Layered,
            _ => Engine::Auto,
        },
        ..LayoutOptions::default()
    });
    let dispatch: Callback<Action> = {
        let d = state.dispatcher();
        Callback::from(move |a| d.dispatch(a))
    };

    // Start-up: a share link in the URL wins over the autosave. The fragment is then removed, so
    // a reload restores the latest autosave rather than the link.
    {
        let d = dispatch.clone();
        use_effect_with((), move |_| {
            // The autosave first, so a damaged link leaves the previous work in place.
            if let Some(json) = io::load_autosave() {
                d.emit(Action::Restore(json));
            }
            if let Some(json) = io::load_design() {
                d.emit(Action::RestoreDesign(json));
            }
            load_fragment(&d);
        });
    }
    // A link pasted into this tab's address bar.
    {
        let d = dispatch.clone();
        use_effect_with((), move |_| listen_window("hashchange", Closure::<dyn Fn()>::new(move || load_fragment(&d))));
    }
    // Autosave after every finished change.
    {
        let doc = state.doc.clone();
        let d = dispatch.clone();
        use_effect_with((state.revision, state.stroke.is_some()), move |&(_, stroking)| {
            // A layer stack (e.g. a model's scaled copy: 32 layers of 512 x 512) as row strings
            // would overflow localStorage; packed, it is 8x smaller.
            let encoding = if doc.stack.is_some() { Encoding::Packed } else { Encoding::Auto };
            if !stroking && let Err(e) = io::save_autosave(&write_json(&doc.to_file(), encoding)) {
                d.emit(Action::Notify(Level::Error, e));
            }
        });
    }
    // The designer's family, after every successful derivation.
    {
        let (design, d) = (state.design.clone(), dispatch.clone());
        use_effect_with(state.design_seq, move |_| {
            if let Some(json) = design.and_then(|x| x.spec.to_json())
                && let Err(e) = io::save_design(&json)
            {
                d.emit(Action::Notify(Level::Error, e));
            }
        });
    }
    // Keyboard shortcuts.
    {
        let d = dispatch.clone();
        use_effect_with((), move |_| {
            let cb = Closure::<dyn Fn(web_sys::KeyboardEvent)>::new(move |e: web_sys::KeyboardEvent| on_key(&e, &d));
            listen_window("keydown", cb)
        });
    }
    // The layer animation.
    {
        let d = dispatch.clone();
        use_effect_with(state.playing, move |&playing| {
            let timer = playing.then(|| gloo_timers::callback::Interval::new(700, move || d.emit(Action::Tick)));
            move || drop(timer)
        });
    }
    // Info messages fade after a while; errors stay until dismissed or replaced.
    {
        let d = dispatch.clone();
        use_effect_with(state.message.clone(), move |m| {
            let timer = m
                .as_ref()
                .filter(|m| m.level == Level::Info)
                .map(|_| gloo_timers::callback::Timeout::new(6000, move || d.emit(Action::Dismiss)));
            move || drop(timer)
        });
    }
    // Flow runs: one per key, started when the Flow view needs it and cancelled (its reports then
    // dropped by the reducer) as soon as the mask or the settings change.
    let gpu_slot = use_mut_ref(|| flow::GpuSlot::Untried);
    {
        let request = state.flow_request();
        let (d, slot, threshold) = (dispatch.clone(), gpu_slot.clone(), state.flow.settings.threshold);
        use_effect_with(request.as_ref().map(|r| r.key), move |_| {
            let cancel = std::rc::Rc::new(std::cell::Cell::new(false));
            if let Some(req) = request {
                wasm_bindgen_futures::spawn_local(flow::run(req, threshold, slot, cancel.clone(), d));
            }
            move || cancel.set(true)
        });
    }
    // Model runs: one per key (model, context, documents, visible range), started while the
    // Models view is shown and cancelled when the key changes.
    {
        let request = state.model_request();
        let d = dispatch.clone();
        use_effect_with(request.as_ref().map(|r| r.key), move |_| {
            let cancel = std::rc::Rc::new(std::cell::Cell::new(false));
            if let Some(req) = request {
                wasm_bindgen_futures::spawn_local(models::run(req, cancel.clone(), d));
            }
            move || cancel.set(true)
        });
    }
    // Theme on the document element, so CSS variables follow it.
    use_effect_with(*theme, |t| {
        if let Some(el) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.document_element()) {
            let _ = el.set_attribute("data-theme", if *t == Theme::Dark { "dark" } else { "light" });
        }
    });

    // Derived data, once per revision.
    let laid = {
        let derived = state.derived.clone();
        let labels = state.doc.labels.clone();
        let options = *layout_options;
        use_memo(state.revision, move |_| {
            let start = io::now();
            let input = HasseInput::from_analysis(&derived.analysis, labels.as_deref().map(Vec::as_slice));
            let scene = layout(&input, &options);
            Laid { scene: Rc::new(scene), millis: io::now() - start }
        })
    };
    let full = {
        let derived = state.derived.clone();
        use_memo((state.revision, state.order_view), move |(_, view)| {
            if *view != OrderView::Full {
                return (Rc::new(Vec::new()), false);
            }
            let (pairs, cut) = derived.analysis.comparable_pairs(FULL_EDGE_LIMIT);
            (Rc::new(pairs), cut)
        })
    };
    let lit = {
        let s = state.clone();
        use_memo((state.revision, state.hover_cell, state.hover_class), move |_| {
            if s.hover_cell.is_some() {
                return Rc::new(s.hovered_path());
            }
            let a = &s.derived.analysis;
            let mut lit = vec![false; a.classes().len()];
            if let Some(c) = s.hover_class.filter(|&c| c < lit.len()) {
                for (b, slot) in lit.iter_mut().enumerate() {
                    *slot = a.class_le(b, c);
                }
            }
            Rc::new(lit)
        })
    };

    // Text and numbers for the panels.
    let a = &state.derived.analysis;
    let n = state.n();
    let entries = state.doc.mask.count_ones();
    let engine = match laid.scene.engine {
        Engine::LayoutRs => "layout-rs",
        Engine::Layered => "layered",
        Engine::Auto => "auto",
    };
    let stats = Rc::new(vec![
        ("n", "N", n.to_string()),
        ("entries", "entries", entries.to_string()),
        ("density", "density", format!("{:.1}%", 100.0 * entries as f64 / (n * n) as f64)),
        ("dense", "dense", if a.is_dense() { "yes".into() } else { "no".into() }),
        ("depth", "L*", a.depth().to_string()),
        ("classes", "classes", a.classes().len().to_string()),
        ("edges", "Hasse edges", a.hasse_edges().len().to_string()),
        ("height", "height", a.height().to_string()),
        ("width", "width", if state.derived.pending { "…".to_string() } else { state.derived.width.to_string() }),
    ]);
    let timing = format!(
        "analysis {:.1} ms · layout {:.1} ms ({engine}, {} nodes)",
        state.derived.millis,
        laid.millis,
        laid.scene.nodes.len()
    );
    let hover_text = hover_sentence(&state);
    let flow_key = state.flow_key();
    let flow_pending = state.flow.current(flow_key).is_none()
        && !matches!(state.flow.status_for(flow_key), crate::state::FlowStatus::Failed(_));
    let growth = Rc::new(a.growth().to_vec());

    // Callbacks.
    let cb = |f: fn((usize, usize)) -> Action| {
        let d = dispatch.clone();
        Callback::from(move |c| d.emit(f(c)))
    };
    let on_stroke_start = cb(|(q, k)| Action::StrokeStart(q, k));
    let on_stroke_move = cb(|(q, k)| Action::StrokeMove(q, k));
    let on_stroke_end = {
        let d = dispatch.clone();
        Callback::from(move |()| d.emit(Action::StrokeEnd))
    };
    let on_stroke_cancel = {
        let d = dispatch.clone();
        Callback::from(move |()| d.emit(Action::StrokeCancel))
    };
    let on_hover = {
        let d = dispatch.clone();
        Callback::from(move |c| d.emit(Action::HoverCell(c)))
    };
    let on_hover_class = {
        let d = dispatch.clone();
        Callback::from(move |c| d.emit(Action::HoverClass(c)))
    };
    let import_file = {
        let d = dispatch.clone();
        Callback::from(move |file: web_sys::File| {
            let d = d.clone();
            let name = file.name();
            // Refuse huge files before reading them into memory.
            let limit = hasseflow_core::format::MAX_INPUT_BYTES;
            if file.size() > limit as f64 {
                d.emit(Action::Notify(
                    Level::Error,
                    format!(
                        "could not import {name}: it is {:.0} MB; the limit is {} MB. Nothing was changed.",
                        file.size() / 1e6,
                        limit / 1_000_000
                    ),
                ));
                return;
            }
            wasm_bindgen_futures::spawn_local(async move {
                match io::read_file(file).await {
                    Ok(bytes) => d.emit(Action::Import { name, bytes }),
                    Err(e) => d.emit(Action::Notify(Level::Error, format!("could not read {name}: {e}"))),
                }
            });
        })
    };
    let on_file = {
        let import_file = import_file.clone();
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            if let Some(f) = input.files().and_then(|l| l.get(0)) {
                import_file.emit(f);
            }
            input.set_value("");
        })
    };
    let ondragover = Callback::from(|e: DragEvent| e.prevent_default());
    let ondrop = {
        let (import_file, view, d) = (import_file.clone(), state.view, dispatch.clone());
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            if let Some(f) = e.data_transfer().and_then(|t| t.files()).and_then(|l| l.get(0)) {
                // In the Models view a dropped file is a config.json; elsewhere a mask.
                if view == View::Models { models::read_config(f, &d) } else { import_file.emit(f) }
            }
        })
    };
    let json = {
        let doc = state.doc.clone();
        move || write_json(&doc.to_file(), Encoding::Auto)
    };
    let export_json = {
        let (json, d) = (json.clone(), dispatch.clone());
        Callback::from(move |_: MouseEvent| {
            if let Err(e) = io::download_text(&json(), "mask.json", "application/json") {
                d.emit(Action::Notify(Level::Error, format!("download failed: {e}")));
            }
        })
    };
    let copy_json = {
        let (json, d) = (json.clone(), dispatch.clone());
        Callback::from(move |_: MouseEvent| {
            let (text, d) = (json(), d.clone());
            wasm_bindgen_futures::spawn_local(async move {
                match io::copy_text(text).await {
                    Ok(()) => d.emit(Action::Notify(Level::Info, "mask JSON copied to the clipboard.".into())),
                    Err(e) => d.emit(Action::Notify(Level::Error, e)),
                }
            });
        })
    };
    let share = {
        let (fragment, d, share_url) = (state.share_fragment(), dispatch.clone(), share_url.clone());
        Callback::from(move |_: MouseEvent| {
            let url = io::url_with_fragment(&fragment);
            share_url.set(Some(url.clone()));
            let d = d.clone();
            wasm_bindgen_futures::spawn_local(async move {
                match io::copy_text(url).await {
                    Ok(()) => d.emit(Action::Notify(Level::Info, "share link copied to the clipboard.".into())),
                    Err(_) => d.emit(Action::Notify(Level::Info, "share link ready: copy it from the box.".into())),
                }
            });
        })
    };
    let export_svg = {
        let (scene, d, t) = (laid.scene.clone(), dispatch.clone(), *theme);
        Callback::from(move |_: MouseEvent| {
            let svg = to_svg(&scene, &if t == Theme::Dark { SvgTheme::dark() } else { SvgTheme::light() });
            if let Err(e) = io::download_text(&svg, "hasse.svg", "image/svg+xml") {
                d.emit(Action::Notify(Level::Error, format!("download failed: {e}")));
            }
        })
    };
    let export_png = {
        let (canvas_ref, d) = (canvas_ref.clone(), dispatch.clone());
        Callback::from(move |_: MouseEvent| {
            let r = canvas_ref
                .cast::<web_sys::HtmlCanvasElement>()
                .ok_or_else(|| "no grid".to_string())
                .and_then(|c| io::download_canvas_png(&c, "grid.png"));
            if let Err(e) = r {
                d.emit(Action::Notify(Level::Error, format!("PNG export failed: {e}")));
            }
        })
    };
    let export_kind = |kind: ExportKind| {
        let (s, d) = (state.clone(), dispatch.clone());
        Callback::from(move |_: MouseEvent| {
            let name = format!("hasseflow-mask.{}", kind.extension());
            let r = s.export_bytes(kind).map_err(|e| e.to_string()).and_then(|bytes| {
                if kind.is_binary() {
                    io::download_bytes(&bytes, &name, "application/octet-stream")
                } else {
                    io::download_text(&String::from_utf8_lossy(&bytes), &name, "text/plain")
                }
            });
            if let Err(e) = r {
                d.emit(Action::Notify(Level::Error, format!("export failed: {e}")));
            }
        })
    };
    // Choosing an item closes the menu (the click bubbles up from the item).
    let close_menu = Callback::from(|e: MouseEvent| {
        let details = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.closest("details").ok().flatten());
        if let Some(d) = details {
            let _ = d.remove_attribute("open");
        }
    });
    let toggle_theme = {
        let theme = theme.clone();
        Callback::from(move |_: MouseEvent| theme.set(if *theme == Theme::Dark { Theme::Light } else { Theme::Dark }))
    };
    let set_view = |v: OrderView| {
        let d = dispatch.clone();
        Callback::from(move |_: MouseEvent| d.emit(Action::SetOrderView(v)))
    };
    let set_side = |v: SideView| {
        let d = dispatch.clone();
        Callback::from(move |_: MouseEvent| d.emit(Action::SetSideView(v)))
    };
    let set_tab = |v: View| {
        let d = dispatch.clone();
        Callback::from(move |_: MouseEvent| d.emit(Action::SetView(v)))
    };
    let close_intro = {
        let intro_open = intro_open.clone();
        Callback::from(move |_: MouseEvent| {
            io::set_intro_closed(true);
            intro_open.set(false);
        })
    };
    let open_intro = {
        let (intro_open, d) = (intro_open.clone(), dispatch.clone());
        Callback::from(move |_: MouseEvent| {
            io::set_intro_closed(false);
            intro_open.set(true);
            d.emit(Action::SetView(View::Editor));
        })
    };
    let dismiss = {
        let d = dispatch.clone();
        Callback::from(move |_: MouseEvent| d.emit(Action::Dismiss))
    };
    let message = state.message.clone().map(|m| {
        // Errors interrupt (role alert); info is read out politely by the status line around it.
        let (class, role) =
            if m.level == Level::Error { ("message error", Some("alert")) } else { ("message info", None) };
        html! {
            <div id="message" class={class} role={role}>
                <span>{ m.text }</span>
                <button type="button" class="dismiss" onclick={dismiss} aria-label="Dismiss message">{"×"}</button>
            </div>
        }
    });

    html! {
        <main {ondragover} {ondrop} data-revision={state.revision.to_string()}>
            <header>
                <h1>{"hasseflow"}</h1>
                <p class="lede">{"Paint an attention mask, step through layers, read the order it converges to."}</p>
                <div class="segmented views" role="tablist" aria-label="View">
                    <button type="button" id="tab-editor" role="tab" aria-selected={(state.view == View::Editor).to_string()}
                        onclick={set_tab(View::Editor)}>{"Editor"}</button>
                    <button type="button" id="tab-designer" role="tab" aria-selected={(state.view == View::Designer).to_string()}
                        onclick={set_tab(View::Designer)}>{"Designer"}</button>
                    <button type="button" id="tab-models" role="tab" aria-selected={(state.view == View::Models).to_string()}
                        onclick={set_tab(View::Models)}
                        title="real models' attention (gallery or config.json) at long contexts">{"Models"}</button>
                </div>
                // docs/THEORY.md, copied next to index.html by trunk (index.html's copy-file link).
                if !*intro_open {
                    <button type="button" id="intro-open" onclick={open_intro}
                        title="What each view shows, and a short tour of the results">{"Tour"}</button>
                }
                <a id="theory-link" class="doc-link" href="THEORY.md" target="_blank" rel="noopener"
                    title="The theory behind the app: definitions, results, reconstructed choices">{"Theory"}</a>
                <button type="button" id="theme" class="theme" onclick={toggle_theme}
                    title="Switch between the light and dark themes">{ if *theme == Theme::Dark { "Light theme" } else { "Dark theme" } }</button>
            </header>
            // Messages have a reserved line under the header: they push nothing over the content
            // and are never an overlay. The live region stays in the page, so changes are read out.
            <div id="status-line" class="status-line" aria-live="polite">{ for message }</div>
            if state.view == View::Designer {
                <DesignerView design={state.design.clone()} hover={state.design_hover} seq={state.design_seq} theme={*theme}
                    link={state.design_fragment()} dispatch={dispatch.clone()} />
            } else if state.view == View::Models {
                <models::ModelsView models={Rc::new(state.models.clone())} theme={*theme} dispatch={dispatch.clone()} />
            } else {
            <div class="columns">
                <aside class="left" aria-label="Editing, presets and files">
                    <Tools tool={state.tool} n={n} can_undo={state.can_undo()} can_redo={state.can_redo()}
                        sparsify={state.sparsify} dispatch={dispatch.clone()} />
                    <PresetPicker dispatch={dispatch.clone()} />
                    <section class="panel files" aria-label="Files and sharing">
                        <div class="toolrow">
                            <details class="menu" id="export-menu">
                                <summary class="button">{"Export ▾"}</summary>
                                <div class="menu-items" role="menu" onclick={close_menu}>
                                    <button type="button" id="export-json" role="menuitem" onclick={export_json}
                                        title="the mask file (JSON v1)">{"Mask JSON (.json)"}</button>
                                    <button type="button" id="export-svg" role="menuitem" onclick={export_svg}
                                        title="the order view as SVG">{"Diagram SVG (.svg)"}</button>
                                    <button type="button" id="export-png" role="menuitem" onclick={export_png}
                                        title="the grid as PNG">{"Grid PNG (.png)"}</button>
                                    { for ExportKind::ALL.into_iter().map(|k| html! {
                                        <button type="button" id={format!("export-{}", k.name())} role="menuitem"
                                            title={k.summary()} onclick={export_kind(k)}>
                                            { format!("{} (.{})", k.name(), k.extension()) }
                                            <span class="menu-note">{ k.summary() }</span>
                                        </button>
                                    }) }
                                </div>
                            </details>
                            <button type="button" id="copy-json" onclick={copy_json}>{"Copy JSON"}</button>
                            <label class="button" for="import">{"Import…"}</label>
                            <input id="import" class="visually-hidden" type="file" accept=".json,.txt,.npy,.py,application/json,text/plain,text/x-python" onchange={on_file} />
                        </div>
                        <PasteImport n={n} dispatch={dispatch.clone()} />
                        <div class="toolrow">
                            <button type="button" id="share" onclick={share}>{"Share link"}</button>
                        </div>
                        if let Some(url) = (*share_url).clone() {
                            <label class="share">{"Link "}<input id="share-url" type="text" readonly=true value={url} /></label>
                        }
                        <p class="hint">{"Drop a mask file (JSON, text grid, .npy, kernel parameters or a mask_mod .py) anywhere to import it. Your work is saved in this browser."}</p>
                    </section>
                </aside>
                <section class="center" aria-label="Mask">
                    <Grid mask={state.doc.mask.clone()} derived={state.derived.clone()} labels={state.doc.labels.clone()} revision={state.revision}
                        layer={state.layer} hover={state.hover_cell} hover_class={state.hover_class} theme={*theme}
                        {on_stroke_start} {on_stroke_move} {on_stroke_end} {on_stroke_cancel} {on_hover} canvas_ref={canvas_ref.clone()}
                        blocks={state.show_blocks.then(|| state.blocks.clone())} />
                    <p id="hover" class="hover" aria-live="polite">{ hover_text }</p>
                    if *intro_open {
                        <Intro dispatch={dispatch.clone()} on_close={close_intro} />
                    }
                    <BlocksPanel stats={state.blocks.clone()} show={state.show_blocks} flash={state.derived.flash.clone()}
                        flashmask={state.derived.flashmask.clone()} dispatch={dispatch.clone()} />
                </section>
                // The layer control and the order (or flow) view sit beside the grid, so the three
                // are seen together without scrolling at 1440 x 900.
                <aside class="right" aria-label="Layers and the order of the limit">
                    <Stats rows={stats} />
                    <LayerControl layer={state.layer} depth={a.depth()} max={state.max_layer()} growth={growth} playing={state.playing}
                        theme={*theme} dispatch={dispatch.clone()} />
                    <div class="segmented side" role="tablist" aria-label="Beside the grid">
                        <button type="button" id="side-order" role="tab" aria-selected={(state.side == SideView::Order).to_string()}
                        onclick={set_side(SideView::Order)}>{"Order"}</button>
                        <button type="button" id="side-flow" role="tab" aria-selected={(state.side == SideView::Flow).to_string()}
                        onclick={set_side(SideView::Flow)}
                            title="masked-attention forward passes of a random Transformer: measured influence beside R(L)">{"Flow"}</button>
                    </div>
                    if state.side == SideView::Flow {
                        <FlowPanel settings={state.flow.settings} outcome={state.flow.current(flow_key).cloned()}
                            status={state.flow.status_for(flow_key)} pending={flow_pending} layer={state.flow_layer()} n={n}
                            hover={state.hover_cell} theme={*theme} dropped={state.flow.dropped} map={state.flow.map}
                            stack_layers={state.doc.stack.as_ref().map(|st| st.0.layers().len())} dispatch={dispatch.clone()} />
                    } else {
                        <section class="panel order" aria-label="Order view">
                            <div class="toolrow">
                                <span class="title">{"Order of the limit"}</span>
                                <div class="segmented" role="group" aria-label="Relation drawn">
                                    <button type="button" id="view-hasse" aria-pressed={(state.order_view == OrderView::Hasse).to_string()}
                                        onclick={set_view(OrderView::Hasse)}>{"Hasse"}</button>
                                    <button type="button" id="view-full" aria-pressed={(state.order_view == OrderView::Full).to_string()}
                                        onclick={set_view(OrderView::Full)}>{"Full order"}</button>
                                </div>
                            </div>
                            <OrderDiagram scene={laid.scene.clone()} full_edges={full.0.clone()} full_truncated={full.1}
                                view={state.order_view} lit={(*lit).clone()} hover_class={state.hover_class} {on_hover_class} />
                        </section>
                    }
                </aside>
            </div>
            }
            <footer><span id="timing" class="timing">{ timing }</span></footer>
        </main>
    }
}

/// Loads the share link in the URL fragment, if any, then removes the fragment (so a reload
/// restores the latest autosave rather than the link).
fn load_fragment(d: &Callback<Action>) {
    let fragment = io::fragment();
    if !fragment.is_empty() {
        d.emit(Action::LoadShared(fragment));
        io::clear_fragment();
    }
}

/// Listens to `event` on the window with `cb`; the returned cleanup (an effect's destructor)
/// stops listening and drops the closure.
fn listen_window<T: ?Sized + wasm_bindgen::closure::WasmClosure>(event: &'static str, cb: Closure<T>) -> impl FnOnce() {
    let w = web_sys::window();
    if let Some(w) = &w {
        let _ = w.add_event_listener_with_callback(event, cb.as_ref().unchecked_ref());
    }
    move || {
        if let Some(w) = w {
            let _ = w.remove_event_listener_with_callback(event, cb.as_ref().unchecked_ref());
        }
    }
}

/// The hovered cell in words.
fn hover_sentence(s: &AppState) -> String {
    let a = &s.derived.analysis;
    if s.hover_cell.is_none()
        && let Some(c) = s.hover_class.filter(|&c| c < a.classes().len())
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
    let Some((q, k)) = s.hover_cell.filter(|&(q, k)| q < s.n() && k < s.n()) else {
        return "Hover a cell: row q is a query, column k a key; a set cell means q attends to k.".into();
    };
    let name = |p: usize| match s.doc.labels.as_ref().and_then(|l| l.get(p)) {
        Some(l) => format!("position {p} (“{l}”)"),
        None => format!("position {p}"),
    };
    let reads = if s.doc.mask.get(q, k) {
        format!("{} attends to {}", name(q), name(k))
    } else if q == k {
        format!("{} keeps its own state through the residual", name(q))
    } else {
        format!("{} does not attend to {}", name(q), name(k))
    };
    let reach = match s.derived.first_reach.get(q, k) {
        Some(0) => "; reached at layer 0 (itself)".to_string(),
        Some(d) => format!("; first reached at layer {d}"),
        None => format!("; never reached: {q} does not see {k} in the limit"),
    };
    format!("{reads}{reach}.")
}

fn on_key(e: &web_sys::KeyboardEvent, d: &Callback<Action>) {
    let in_field = e
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .map(|el| el.tag_name().to_ascii_uppercase())
        .is_some_and(|t| t == "INPUT" || t == "SELECT" || t == "TEXTAREA");
    let key = e.key().to_ascii_lowercase();
    if e.ctrl_key() || e.meta_key() {
        if in_field {
            return;
        }
        let action = match key.as_str() {
            "z" if e.shift_key() => Action::Redo,
            "z" => Action::Undo,
            "y" => Action::Redo,
            _ => return,
        };
        e.prevent_default();
        d.emit(action);
        return;
    }
    if in_field || e.alt_key() {
        return;
    }
    let action = match key.as_str() {
        "[" | "," => Action::StepLayer(-1),
        "]" | "." => Action::StepLayer(1),
        "p" => Action::TogglePlay,
        k => match crate::state::Tool::ALL.iter().find(|(_, _, c)| k.len() == 1 && k.starts_with(*c)) {
            Some((t, _, _)) => Action::SetTool(*t),
            None => return,
        },
    };
    e.prevent_default();
    d.emit(action);
}
