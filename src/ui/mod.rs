//! The Yew shell (wasm only): `<App>` owns the one store (`use_reducer` over
//! [`AppState`](crate::state::AppState)), runs the IO effects through the named hooks of
//! [`hooks`] (autosave, links, keyboard, animation and message timers, flow and model runners,
//! theme), memoises the Hasse layout per revision, and lays out the page: [`header`] (title,
//! views, theme; the status line), [`editor`] (tools and files | grid | side panel), the
//! designer and the Models view.

mod chart;
mod designer;
mod editor;
mod files;
mod flow;
mod form;
mod grid;
mod header;
mod hooks;
mod intro;
mod io;
mod job;
mod lazy;
mod models;
mod order;
mod palette;
mod panels;
mod paste;
mod store;

use std::rc::Rc;

use yew::prelude::*;

use crate::state::{Action, AppState, View, ViewAction};
use designer::DesignerView;
use editor::EditorView;
use header::{Header, StatusLine};
use hooks::{
    use_autosave, use_dispatch, use_flow_runner, use_hasse_layout, use_keyboard, use_layer_animation,
    use_lazy_designer, use_lazy_models, use_lazy_reader, use_message_timeout, use_models_runner, use_startup_and_links,
    use_theme,
};
use palette::Theme;
use store::{Store, use_groups};

/// The application.
#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(|| store::Reduced(AppState::new(AppState::initial_document(), io::now)));
    let dispatch = use_dispatch(&state);
    let groups = use_groups(&dispatch);
    let (on_models, on_view, on_import) = (groups.models.clone(), groups.view.clone(), groups.import.clone());
    let theme = use_theme();
    // The first-visit introduction, until closed (remembered in localStorage).
    let intro_open = use_state(|| !io::intro_closed());
    // The latest share link, shown under the Share button (kept across views).
    let share_url = use_state(|| None::<String>);
    use_startup_and_links(&dispatch);
    use_autosave(&state, &dispatch);
    use_keyboard(&dispatch);
    use_layer_animation(state.editor.playing, &dispatch);
    use_message_timeout(&state, &dispatch);
    use_flow_runner(&state, &dispatch);
    use_lazy_reader(&state, &dispatch);
    use_lazy_models(&state, &dispatch);
    use_lazy_designer(&state, &dispatch);
    use_models_runner(&state, &dispatch);
    let laid = use_hasse_layout(&state);

    let ondragover = Callback::from(|e: DragEvent| e.prevent_default());
    let ondrop = {
        let (view, on_import, on_models, on_view) = (state.view, on_import.clone(), on_models.clone(), on_view.clone());
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            if let Some(f) = e.data_transfer().and_then(|t| t.files()).and_then(|l| l.get(0)) {
                // In the Models view a dropped file is a config.json; elsewhere a mask.
                if view == View::Models {
                    models::read_config(f, &on_models, &on_view)
                } else {
                    files::import_file(f, &on_import, &on_view)
                }
            }
        })
    };
    let toggle_theme = {
        let theme = theme.clone();
        Callback::from(move |_: MouseEvent| theme.set(if *theme == Theme::Dark { Theme::Light } else { Theme::Dark }))
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
            d.emit(Action::View(ViewAction::SetView(View::Editor)));
        })
    };
    let engine = match laid.scene.engine {
        hasseflow_render::Engine::LayoutRs => "layout-rs",
        hasseflow_render::Engine::Layered => "layered",
        hasseflow_render::Engine::Auto => "auto",
    };
    let timing = format!(
        "analysis {:.1} ms · layout {:.1} ms ({engine}, {} nodes)",
        state.editor.derived.millis,
        laid.millis,
        laid.scene.nodes.len()
    );

    html! {
        <main {ondragover} {ondrop} data-revision={state.editor.revision.to_string()}>
            <Header view={state.view} theme={*theme} intro_open={*intro_open} on_open_intro={open_intro}
                on_toggle_theme={toggle_theme} on_view={on_view.clone()} />
            // Messages have a reserved line under the header: they push nothing over the content
            // and are never an overlay. The live region stays in the page, so changes are read out.
            <StatusLine message={state.message.clone()} on_view={on_view.clone()} />
            if state.view == View::Designer {
                <DesignerView design={state.designer.design.clone()} hover={state.designer.hover} seq={state.designer.seq} theme={*theme}
                    deriving={state.designer.deriving.as_ref().map(|p| p.spec.describe())} dispatch={dispatch.clone()} />
            } else if state.view == View::Models {
                <models::ModelsView models={Rc::new(state.models.clone())} theme={*theme} {on_models} {on_view} />
            } else {
                <EditorView store={Store::new(&state)} scene={laid.scene.clone()} theme={*theme} intro_open={*intro_open}
                    on_close_intro={close_intro} share_url={share_url.clone()} dispatch={dispatch.clone()} />
            }
            <footer><span id="timing" class="timing">{ timing }</span></footer>
        </main>
    }
}
