//! The Models view's form: the gallery, a `config.json` (file, drop or paste), the context and
//! the document lengths, and the actions on the result (scaled copy, JSON export).

use std::rc::Rc;

use hasseflow_core::model::{self, MAX_CONFIG_BYTES, ScaledModel};
use yew::prelude::*;

use super::super::form::{input_value, on_click, select_value};
use super::super::io;
use crate::state::{Action, Level, MAX_MODEL_N, ModelChoice, ModelOutcome};

/// Reads a dropped or picked `config.json` and hands it to the reducer (huge files are refused
/// before they are read).
pub fn read_config(file: web_sys::File, d: &Callback<Action>) {
    let name = file.name();
    if file.size() > MAX_CONFIG_BYTES as f64 {
        d.emit(Action::Notify(
            Level::Error,
            format!(
                "could not read {name}: config: {} bytes is more than the {MAX_CONFIG_BYTES} allowed. The current model stays.",
                file.size()
            ),
        ));
        return;
    }
    let d = d.clone();
    wasm_bindgen_futures::spawn_local(async move {
        match io::read_file(file).await {
            Ok(bytes) => d.emit(Action::LoadModelConfig { name, bytes }),
            Err(e) => d.emit(Action::Notify(Level::Error, format!("could not read {name}: {e}"))),
        }
    });
}

/// Form properties.
#[derive(Properties, Clone, PartialEq)]
pub struct PickerProps {
    /// The model.
    pub choice: ModelChoice,
    /// Context.
    pub n: u64,
    /// Documents.
    pub docs: Vec<u64>,
    /// The scaled copy the editor would get, or why there is none.
    pub scaled: Result<ScaledModel, String>,
    /// The current run, for the export.
    pub outcome: Option<Rc<ModelOutcome>>,
    /// Dispatch.
    pub dispatch: Callback<Action>,
}

/// The form.
#[function_component(ModelPicker)]
pub fn model_picker(p: &PickerProps) -> Html {
    let n_text = use_state(|| p.n.to_string());
    let docs_text = use_state(|| p.docs.iter().map(u64::to_string).collect::<Vec<_>>().join(","));
    let paste = use_state(String::new);
    let d = &p.dispatch;
    let on_model = {
        let d = d.clone();
        Callback::from(move |e: Event| d.emit(Action::SelectModel(select_value(&e))))
    };
    let apply = {
        let (d, n_text, docs_text) = (d.clone(), n_text.clone(), docs_text.clone());
        move |n: String, docs: String| {
            n_text.set(n.clone());
            docs_text.set(docs.clone());
            d.emit(Action::SetModelContext { n, docs });
        }
    };
    let on_n = {
        let (apply, docs_text) = (apply.clone(), docs_text.clone());
        Callback::from(move |e: Event| apply(input_value(&e), (*docs_text).clone()))
    };
    let on_docs = {
        let n_text = n_text.clone();
        Callback::from(move |e: Event| apply((*n_text).clone(), input_value(&e)))
    };
    let on_file = {
        let d = d.clone();
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            if let Some(f) = input.files().and_then(|l| l.get(0)) {
                read_config(f, &d);
            }
            input.set_value("");
        })
    };
    let on_paste_text = {
        let paste = paste.clone();
        Callback::from(move |e: InputEvent| {
            let t: web_sys::HtmlTextAreaElement = e.target_unchecked_into();
            paste.set(t.value());
        })
    };
    let on_paste = {
        let (d, paste) = (d.clone(), paste.clone());
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            d.emit(Action::LoadModelConfig { name: "pasted config.json".into(), bytes: paste.as_bytes().to_vec() });
        })
    };
    let open_scaled = on_click(d, Action::OpenScaledModel);
    let export = p.outcome.clone().map(|o| {
        let d = d.clone();
        Callback::from(move |_: MouseEvent| {
            let name = format!(
                "{}-{}.json",
                o.run.spec.name.replace(|c: char| !c.is_ascii_alphanumeric() && c != '.' && c != '-', "_"),
                o.run.n
            );
            if let Err(e) = io::download_text(&o.to_json(), &name, "application/json") {
                d.emit(Action::Notify(Level::Error, format!("download failed: {e}")));
            }
        })
    });
    let spec = &p.choice.spec;
    let entry = p.choice.gallery.and_then(|g| model::gallery().iter().find(|e| e.name == g));
    html! {
        <>
        <section class="panel model-form" aria-label="Model">
            <label class="field" for="model-gallery">{"Gallery model"}</label>
            <select id="model-gallery" onchange={on_model}>
                if p.choice.gallery.is_none() {
                    <option value="" selected=true disabled=true>{ format!("{} (config file)", spec.name) }</option>
                }
                { for model::gallery().iter().map(|e| {
                    let summary = model::load_gallery(e.name).map(|s| model::pattern_summary(&s.layers)).unwrap_or_default();
                    html! { <option value={e.name} selected={p.choice.gallery == Some(e.name)} title={summary.clone()}>
                        { format!("{} — {}", e.name, summary) }</option> }
                }) }
            </select>
            <p class="formula" id="model-pattern">{ format!("{} · {} · {} layers: {}", spec.name,
                if spec.causal { "decoder (causal)" } else { "encoder (bidirectional)" }, spec.layers.len(), model::pattern_summary(&spec.layers)) }</p>
            if let Some(e) = entry {
                <p class="hint">{ e.notes }{" · "}<a class="doc-link" href={e.source} target="_blank" rel="noopener">{"config.json"}</a></p>
            } else {
                <p class="hint">{ format!("from {}", p.choice.source) }</p>
            }
            <div class="toolrow">
                <label class="button" for="model-file">{"Open config.json…"}</label>
                <input id="model-file" class="visually-hidden" type="file" accept=".json,application/json" onchange={on_file} />
            </div>
            <details class="paste" id="model-paste">
                <summary>{"Paste a config.json…"}</summary>
                <form onsubmit={on_paste}>
                    <label for="model-paste-text">{"config.json text"}</label>
                    <textarea id="model-paste-text" rows="6" spellcheck="false" value={(*paste).clone()} oninput={on_paste_text}
                        placeholder={r#"{"model_type": "mistral", "num_hidden_layers": 32, "sliding_window": 4096}"#} />
                    <button type="submit" id="model-paste-load">{"Load config"}</button>
                </form>
            </details>
            <p class="hint">{"Drop a config.json anywhere on this view to load it."}</p>
        </section>
        <section class="panel model-context" aria-label="Context">
            <label class="field" for="model-n">{"Context length n"}</label>
            <input id="model-n" type="text" inputmode="numeric" value={(*n_text).clone()} onchange={on_n}
                aria-describedby="model-n-hint" />
            <p class="hint" id="model-n-hint">{ format!("up to {MAX_MODEL_N} in the browser") }</p>
            <label class="field" for="model-docs">{"Document lengths (optional)"}</label>
            <input id="model-docs" type="text" placeholder="e.g. 65536,65536" value={(*docs_text).clone()} onchange={on_docs}
                aria-describedby="model-docs-hint" />
            <p class="hint" id="model-docs-hint">{"comma list summing to n: packed documents, each its own sequence"}</p>
        </section>
        <section class="panel model-actions" aria-label="Use the result">
            <button type="button" id="model-open-scaled" onclick={open_scaled} disabled={p.scaled.is_err()}>{"Open a scaled copy in the editor"}</button>
            <p class="hint" id="model-scale">{ match &p.scaled {
                Ok(s) => format!("{} (a dense {}-layer stack)", s.summary, spec.layers.len()),
                Err(e) => e.clone(),
            } }</p>
            <button type="button" id="model-export" disabled={export.is_none()} onclick={export.unwrap_or_default()}
                title="the report, as hasseflow model --json prints it">{"Export report (JSON)"}</button>
        </section>
        </>
    }
}
