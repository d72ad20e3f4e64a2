//! The Files and sharing panel: exports (mask JSON, the diagram's SVG, the grid's PNG, every
//! `ExportKind`), Copy JSON, import by file or paste, and the share link. Everything heavy (the
//! JSON, an export, the share link's encoding) is computed when its button is clicked, from the
//! state at that moment, never while rendering.

use std::rc::Rc;

use hasseflow_core::format::{Encoding, write_json};
use hasseflow_core::interop::{self, ExportKind};
use hasseflow_render::{Scene, SvgTheme, to_svg};
use wasm_bindgen::JsCast;
use yew::prelude::*;

use super::palette::Theme;
use super::paste::PasteImport;
use super::{io, lazy};
use crate::state::{ImportAction, Level, ViewAction};
use crate::ui::store::Store;

/// Reads a dropped or chosen mask file and imports it; huge files are refused before reading.
pub fn import_file(file: web_sys::File, on_import: &Callback<ImportAction>, on_view: &Callback<ViewAction>) {
    let (d, v) = (on_import.clone(), on_view.clone());
    let name = file.name();
    let limit = hasseflow_core::format::MAX_INPUT_BYTES;
    if file.size() > limit as f64 {
        v.emit(ViewAction::Notify(
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
            Ok(bytes) => d.emit(ImportAction::ImportFile { name, bytes }),
            Err(e) => v.emit(ViewAction::Notify(Level::Error, format!("could not read {name}: {e}"))),
        }
    });
}

/// Files panel properties.
#[derive(Properties, PartialEq, Clone)]
pub struct FilesProps {
    /// The store, read when a button is clicked.
    pub store: Store,
    /// The order view's diagram (the SVG export).
    pub scene: Rc<Scene>,
    /// Colour theme (of the SVG export).
    pub theme: Theme,
    /// The grid's canvas (the PNG export).
    pub canvas_ref: NodeRef,
    /// The latest share link.
    pub share_url: UseStateHandle<Option<String>>,
    /// Files and pasted text into the editor.
    pub on_import: Callback<ImportAction>,
    /// Messages (downloads, the clipboard).
    pub on_view: Callback<ViewAction>,
}

/// The Files and sharing panel.
#[function_component(FilesPanel)]
pub fn files_panel(p: &FilesProps) -> Html {
    let json = {
        let s = p.store.clone();
        move || write_json(&s.editor.doc.to_file(), Encoding::Auto)
    };
    let export_json = {
        let (json, d) = (json.clone(), p.on_view.clone());
        Callback::from(move |_: MouseEvent| {
            if let Err(e) = io::download_text(&json(), "mask.json", "application/json") {
                d.emit(ViewAction::Notify(Level::Error, format!("download failed: {e}")));
            }
        })
    };
    let copy_json = {
        let d = p.on_view.clone();
        Callback::from(move |_: MouseEvent| {
            let (text, d) = (json(), d.clone());
            wasm_bindgen_futures::spawn_local(async move {
                match io::copy_text(text).await {
                    Ok(()) => d.emit(ViewAction::Notify(Level::Info, "mask JSON copied to the clipboard.".into())),
                    Err(e) => d.emit(ViewAction::Notify(Level::Error, e)),
                }
            });
        })
    };
    let share = {
        let (s, d, share_url) = (p.store.clone(), p.on_view.clone(), p.share_url.clone());
        Callback::from(move |_: MouseEvent| {
            let url = io::url_with_fragment(&s.share_fragment());
            share_url.set(Some(url.clone()));
            let d = d.clone();
            wasm_bindgen_futures::spawn_local(async move {
                match io::copy_text(url).await {
                    Ok(()) => d.emit(ViewAction::Notify(Level::Info, "share link copied to the clipboard.".into())),
                    Err(_) => d.emit(ViewAction::Notify(Level::Info, "share link ready: copy it from the box.".into())),
                }
            });
        })
    };
    let export_svg = {
        let (scene, d, t) = (p.scene.clone(), p.on_view.clone(), p.theme);
        Callback::from(move |_: MouseEvent| {
            let svg = to_svg(&scene, &if t == Theme::Dark { SvgTheme::dark() } else { SvgTheme::light() });
            if let Err(e) = io::download_text(&svg, "hasse.svg", "image/svg+xml") {
                d.emit(ViewAction::Notify(Level::Error, format!("download failed: {e}")));
            }
        })
    };
    let export_png = {
        let (canvas_ref, d) = (p.canvas_ref.clone(), p.on_view.clone());
        Callback::from(move |_: MouseEvent| {
            let r = canvas_ref
                .cast::<web_sys::HtmlCanvasElement>()
                .ok_or_else(|| "no grid".to_string())
                .and_then(|c| io::download_canvas_png(&c, "grid.png"));
            if let Err(e) = r {
                d.emit(ViewAction::Notify(Level::Error, format!("PNG export failed: {e}")));
            }
        })
    };
    // The codecs load on first use (the lazily loaded module, with the mask_mod reader): the
    // request is made now, from the document as it is, and the download follows the answer.
    let export_kind = |kind: ExportKind| {
        let (s, d) = (p.store.clone(), p.on_view.clone());
        Callback::from(move |_: MouseEvent| {
            let name = format!("hasseflow-mask.{}", kind.extension());
            let request = s.export_request(kind).to_json();
            let d = d.clone();
            wasm_bindgen_futures::spawn_local(async move {
                let r = lazy::export(request)
                    .await
                    .map_err(|e| format!("the exporter did not load ({e})"))
                    .and_then(|a| interop::wire::read_export(&a))
                    .and_then(|bytes| {
                        if kind.is_binary() {
                            io::download_bytes(&bytes, &name, "application/octet-stream")
                        } else {
                            io::download_text(&String::from_utf8_lossy(&bytes), &name, "text/plain")
                        }
                    });
                if let Err(e) = r {
                    d.emit(ViewAction::Notify(Level::Error, format!("export failed: {e}")));
                }
            });
        })
    };
    let on_file = {
        let (d, v) = (p.on_import.clone(), p.on_view.clone());
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            if let Some(f) = input.files().and_then(|l| l.get(0)) {
                import_file(f, &d, &v);
            }
            input.set_value("");
        })
    };

    html! {
        // Busy while a mask_mod import waits for the lazily loaded reader: the import it started
        // has not landed yet.
        <section class="panel files" aria-label="Files and sharing"
            aria-busy={p.store.editor.reading.is_some().then_some("true")}>
            <div class="toolrow">
                <details class="menu" id="export-menu">
                    <summary class="button">{"Export ▾"}</summary>
                    <div class="menu-items" role="menu" onclick={Callback::from(close_menu)}>
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
            <PasteImport n={p.store.n()} refusal={p.store.editor.paste_refusal.clone()} on_import={p.on_import.clone()} />
            <div class="toolrow">
                <button type="button" id="share" onclick={share}>{"Share link"}</button>
            </div>
            if let Some(url) = (*p.share_url).clone() {
                <label class="share">{"Link "}<input id="share-url" type="text" readonly=true value={url} /></label>
            }
            <p class="hint">{"Drop a mask file (JSON, text grid, .npy, kernel parameters or a mask_mod .py) anywhere to import it. Your work is saved in this browser."}</p>
        </section>
    }
}

/// Choosing an item closes the menu (the click bubbles up from the item).
fn close_menu(e: MouseEvent) {
    let details = e
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .and_then(|el| el.closest("details").ok().flatten());
    if let Some(d) = details {
        let _ = d.remove_attribute("open");
    }
}
