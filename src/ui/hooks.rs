//! The shell's effects as named hooks, each keyed by what it depends on: start-up loading and
//! link listening, autosave (document and designer family), keyboard shortcuts, the layer
//! animation, the message timer, the flow and model runners, the theme; and the Hasse layout,
//! memoised per revision. `<App>` calls them once each; none renders anything.

use std::rc::Rc;

use hasseflow_core::format::{Encoding, write_json};
use hasseflow_render::{Engine, HasseInput, LayoutOptions, Scene, layout};
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::{Closure, WasmClosure};
use yew::prelude::*;

use super::palette::Theme;
use super::store::Reduced;
use super::{flow, io, job, lazy, models};
use crate::state::{Action, AppState, DesignerAction, EditAction, ImportAction, Level, ModelsAction, Tool, ViewAction};

/// The Hasse layout of one revision and how long it took.
pub struct Laid {
    /// The laid-out diagram.
    pub scene: Rc<Scene>,
    /// Milliseconds the layout took.
    pub millis: f64,
}

/// The store's dispatcher as a callback (what the components take).
#[hook]
pub fn use_dispatch(state: &UseReducerHandle<Reduced>) -> Callback<Action> {
    let d = state.dispatcher();
    // The dispatcher is stable across renders, so one callback serves them all.
    (*use_memo((), move |_| Callback::from(move |a| d.dispatch(a)))).clone()
}

/// Start-up: a share link in the URL wins over the autosave. The fragment is then removed, so a
/// reload restores the latest autosave rather than the link. Later, a link pasted into this tab's
/// address bar (`hashchange`) is loaded the same way.
#[hook]
pub fn use_startup_and_links(dispatch: &Callback<Action>) {
    let d = dispatch.clone();
    use_effect_with((), move |_| {
        // The autosave first, so a damaged link leaves the previous work in place.
        if let Some(json) = io::load_autosave() {
            d.emit(Action::Import(ImportAction::Restore(json)));
        }
        if let Some(json) = io::load_design() {
            d.emit(Action::Designer(DesignerAction::Restore(json)));
        }
        load_fragment(&d);
    });
    let d = dispatch.clone();
    use_effect_with((), move |_| listen_window("hashchange", Closure::<dyn Fn()>::new(move || load_fragment(&d))));
}

/// Autosaves the document after every finished change (not during a stroke), and the designer's
/// family after every successful derivation.
#[hook]
pub fn use_autosave(state: &AppState, dispatch: &Callback<Action>) {
    let (doc, d) = (state.editor.doc.clone(), dispatch.clone());
    use_effect_with((state.editor.revision, state.editor.stroke.is_some()), move |&(_, stroking)| {
        // A layer stack (e.g. a model's scaled copy: 32 layers of 512 x 512) as row strings
        // would overflow localStorage; packed, it is 8x smaller.
        let encoding = if doc.stack.is_some() { Encoding::Packed } else { Encoding::Auto };
        if !stroking && let Err(e) = io::save_autosave(&write_json(&doc.to_file(), encoding)) {
            d.emit(Action::View(ViewAction::Notify(Level::Error, e)));
        }
    });
    let (design, d) = (state.designer.design.clone(), dispatch.clone());
    use_effect_with(state.designer.seq, move |_| {
        if let Some(json) = design.and_then(|x| x.spec.to_json())
            && let Err(e) = io::save_design(&json)
        {
            d.emit(Action::View(ViewAction::Notify(Level::Error, e)));
        }
    });
}

/// Keyboard shortcuts on the window: undo/redo, layer steps, play, tools.
#[hook]
pub fn use_keyboard(dispatch: &Callback<Action>) {
    let d = dispatch.clone();
    use_effect_with((), move |_| {
        let cb = Closure::<dyn Fn(web_sys::KeyboardEvent)>::new(move |e: web_sys::KeyboardEvent| on_key(&e, &d));
        listen_window("keydown", cb)
    });
}

/// The layer animation: a tick every 700 ms while playing.
#[hook]
pub fn use_layer_animation(playing: bool, dispatch: &Callback<Action>) {
    let d = dispatch.clone();
    use_effect_with(playing, move |&playing| {
        let timer =
            playing.then(|| gloo_timers::callback::Interval::new(700, move || d.emit(Action::View(ViewAction::Tick))));
        move || drop(timer)
    });
}

/// Info messages fade after a while; errors stay until dismissed or replaced.
#[hook]
pub fn use_message_timeout(state: &AppState, dispatch: &Callback<Action>) {
    let d = dispatch.clone();
    use_effect_with(state.message.clone(), move |m| {
        let timer = m
            .as_ref()
            .filter(|m| m.level == Level::Info)
            .map(|_| gloo_timers::callback::Timeout::new(6000, move || d.emit(Action::View(ViewAction::Dismiss))));
        move || drop(timer)
    });
}

/// Flow runs: one per key, started when the Flow view needs it and cancelled (its reports then
/// dropped by the reducer) as soon as the mask or the settings change. The WebGPU device is
/// opened once and kept for the page.
#[hook]
pub fn use_flow_runner(state: &AppState, dispatch: &Callback<Action>) {
    let gpu_slot = use_mut_ref(|| flow::GpuSlot::Untried);
    let request = state.flow_request();
    let (d, threshold) = (dispatch.clone(), state.flow.settings.threshold);
    job::use_job(request.as_ref().map(|r| r.key), move |cancel| {
        request.map(|req| flow::run(req, threshold, gpu_slot, cancel, d))
    });
}

/// Model runs: one per key (model, context, documents, visible range), started while the Models
/// view is shown and cancelled when the key changes.
#[hook]
pub fn use_models_runner(state: &AppState, dispatch: &Callback<Action>) {
    let request = state.model_request();
    let d = dispatch.clone();
    job::use_job(request.as_ref().map(|r| r.key), move |cancel| request.map(|req| models::run(req, cancel, d)));
}

/// Asks a lazily loaded module for the store's waiting request, once per request: `ask` awaits the
/// module's answer and gives the action that carries it (a stale answer is dropped by the store).
/// The three below are this hook with their request and module.
#[hook]
fn use_lazy_answer<P, A, F>(pending: Option<Rc<P>>, dispatch: &Callback<Action>, ask: A)
where
    P: PartialEq + 'static,
    A: FnOnce(Rc<P>) -> F + 'static,
    F: std::future::Future<Output = Action> + 'static,
{
    let d = dispatch.clone();
    use_effect_with(pending, move |pending| {
        if let Some(p) = pending.clone() {
            wasm_bindgen_futures::spawn_local(async move { d.emit(ask(p).await) });
        }
    });
}

/// An import waiting for a lazily loaded reader (`EditorState::reading`: a `mask_mod`, a `.npy`
/// array or kernel parameters, each asked of its module by `lazy::answer`), answered with
/// `ImportAction::Answered`.
#[hook]
pub fn use_lazy_reader(state: &AppState, dispatch: &Callback<Action>) {
    use_lazy_answer(state.editor.reading.clone(), dispatch, |r| async move {
        let answer = lazy::answer(r.request.to_json(), r.request.is_mask_mod()).await;
        Action::Import(ImportAction::Answered { id: r.id, answer })
    });
}

/// The store's waiting model read for the lazily loaded config reader ([`AppState::model_read`]:
/// only while the Models view is shown), answered with `ModelsAction::Answered`.
#[hook]
pub fn use_lazy_models(state: &AppState, dispatch: &Callback<Action>) {
    use_lazy_answer(state.model_read(), dispatch, |r| async move {
        let answer = lazy::read_model(r.request.to_json()).await;
        Action::Models(ModelsAction::Answered { id: r.id, answer })
    });
}

/// The derivation the store is waiting for, for the lazily loaded Designer module
/// ([`AppState::design_request`]: only while the Designer is shown), answered with
/// `DesignerAction::Answered`.
#[hook]
pub fn use_lazy_designer(state: &AppState, dispatch: &Callback<Action>) {
    use_lazy_answer(state.design_request(), dispatch, |r| async move {
        let answer = lazy::derive(r.request.clone()).await;
        Action::Designer(DesignerAction::Answered { id: r.id, answer })
    });
}

/// The colour theme: the system's preference at first, then the user's; set on the document
/// element so CSS variables follow it.
#[hook]
pub fn use_theme() -> UseStateHandle<Theme> {
    let theme = use_state(initial_theme);
    use_effect_with(*theme, |t| {
        if let Some(el) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.document_element()) {
            let _ = el.set_attribute("data-theme", if *t == Theme::Dark { "dark" } else { "light" });
        }
    });
    theme
}

/// The Hasse layout of the current revision, timed. `?layout=layout-rs|layered` forces an engine
/// (for measuring); the default picks by size.
#[hook]
pub fn use_hasse_layout(state: &AppState) -> Rc<Laid> {
    let options = use_memo((), |_| LayoutOptions {
        engine: match io::query_param("layout").as_deref() {
            Some("layout-rs") => Engine::LayoutRs,
            Some("layered") => Engine::Layered,
            _ => Engine::Auto,
        },
        ..LayoutOptions::default()
    });
    let (derived, labels) = (state.editor.derived.clone(), state.editor.doc.labels.clone());
    use_memo(state.editor.revision, move |_| {
        let start = io::now();
        let input = HasseInput::from_analysis(&derived.analysis, labels.as_deref().map(Vec::as_slice));
        let scene = layout(&input, &options);
        Laid { scene: Rc::new(scene), millis: io::now() - start }
    })
}

fn initial_theme() -> Theme {
    let dark = web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches());
    if dark { Theme::Dark } else { Theme::Light }
}

/// Loads the share link in the URL fragment, if any, then removes the fragment (so a reload
/// restores the latest autosave rather than the link).
fn load_fragment(d: &Callback<Action>) {
    let fragment = io::fragment();
    if !fragment.is_empty() {
        d.emit(Action::Import(ImportAction::LoadShared(fragment)));
        io::clear_fragment();
    }
}

/// Listens to `event` on the window with `cb`; the returned cleanup (an effect's destructor)
/// stops listening and drops the closure.
fn listen_window<T: ?Sized + WasmClosure>(event: &'static str, cb: Closure<T>) -> impl FnOnce() {
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
            "z" if e.shift_key() => Action::Edit(EditAction::Redo),
            "z" => Action::Edit(EditAction::Undo),
            "y" => Action::Edit(EditAction::Redo),
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
        "[" | "," => Action::View(ViewAction::StepLayer(-1)),
        "]" | "." => Action::View(ViewAction::StepLayer(1)),
        "p" => Action::View(ViewAction::TogglePlay),
        k => match Tool::ALL.iter().find(|(_, _, c)| k.len() == 1 && k.starts_with(*c)) {
            Some((t, _, _)) => Action::Edit(EditAction::SetTool(*t)),
            None => return,
        },
    };
    e.prevent_default();
    d.emit(action);
}
