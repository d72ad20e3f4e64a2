//! The Models view's form: the gallery, a `config.json` (file, drop or paste), the reader's
//! notes, the context, the document lengths and the image spans (an encoder-decoder's encoder
//! length instead of documents and images), and the actions on the result (scaled copy, JSON
//! export).

use std::rc::Rc;

use hasseflow_core::model::{self, MAX_CONFIG_BYTES, ScaledModel};
use yew::prelude::*;

use super::super::form::{input_value, on_click, select_value};
use super::super::io;
use crate::state::{
    Level, MAX_MODEL_N, ModelChoice, ModelOutcome, ModelsAction, ViewAction, clipped, describe, gallery_options,
};

/// Reads a dropped or picked `config.json` and hands it to the reducer (huge files are refused
/// before they are read).
pub fn read_config(file: web_sys::File, on_models: &Callback<ModelsAction>, on_view: &Callback<ViewAction>) {
    let name = file.name();
    if file.size() > MAX_CONFIG_BYTES as f64 {
        on_view.emit(ViewAction::Notify(
            Level::Error,
            format!(
                "could not read {name}: config: {} bytes is more than the {MAX_CONFIG_BYTES} allowed. The current model stays.",
                file.size()
            ),
        ));
        return;
    }
    let (d, v) = (on_models.clone(), on_view.clone());
    wasm_bindgen_futures::spawn_local(async move {
        match io::read_file(file).await {
            Ok(bytes) => d.emit(ModelsAction::LoadConfig { name, bytes }),
            Err(e) => v.emit(ViewAction::Notify(Level::Error, format!("could not read {name}: {e}"))),
        }
    });
}

/// Form properties.
#[derive(Properties, Clone, PartialEq)]
pub struct PickerProps {
    /// The model.
    pub choice: ModelChoice,
    /// What is being read while the config reader loads (`ModelsState::reading`), if anything.
    pub reading: Option<String>,
    /// Context.
    pub n: u64,
    /// An encoder-decoder's encoder length as set (`None`: the context length).
    pub encoder_n: Option<u64>,
    /// Documents.
    pub docs: Vec<u64>,
    /// Image spans `[start, length]`.
    pub images: Vec<[u64; 2]>,
    /// The scaled copy the editor would get, or why there is none.
    pub scaled: Result<ScaledModel, String>,
    /// The current run, for the export.
    pub outcome: Option<Rc<ModelOutcome>>,
    /// The model, its context, the scaled copy.
    pub on_models: Callback<ModelsAction>,
    /// Messages (a file that cannot be read, a failed download).
    pub on_view: Callback<ViewAction>,
}

/// The form.
#[function_component(ModelPicker)]
pub fn model_picker(p: &PickerProps) -> Html {
    let n_text = use_state(|| p.n.to_string());
    let docs_text = use_state(|| p.docs.iter().map(u64::to_string).collect::<Vec<_>>().join(","));
    let enc_text = use_state(|| p.encoder_n.map(|m| m.to_string()).unwrap_or_default());
    let images_text = use_state(|| p.images.iter().map(|[s, l]| format!("{s}:{l}")).collect::<Vec<_>>().join(","));
    let paste = use_state(String::new);
    // The gallery's option texts: read once (each entry's config parsed).
    let options = use_memo((), |_| gallery_options());
    let d = &p.on_models;
    let on_model = {
        let d = d.clone();
        Callback::from(move |e: Event| d.emit(ModelsAction::Select(select_value(&e))))
    };
    // One action for the four fields: each change sends all of them as typed.
    // An encoder-decoder has no documents or images: its changes clear them (the reducer does too).
    let texts = [n_text.clone(), docs_text.clone(), enc_text.clone(), images_text.clone()];
    // What is typed is kept as it is typed: a render before the change event (a run finishing
    // while the user types) sets each field's value from its text, and would otherwise put back
    // the old figure (yew refreshes an input's value from the DOM on every render).
    let on_typing = |field: usize| {
        let text = texts[field].clone();
        Callback::from(move |e: InputEvent| {
            let t: web_sys::HtmlInputElement = e.target_unchecked_into();
            text.set(t.value());
        })
    };
    let (type_n, type_docs, type_enc, type_images) = (on_typing(0), on_typing(1), on_typing(2), on_typing(3));
    let has_encoder = p.choice.spec.encoder.is_some();
    let apply = {
        let d = d.clone();
        move |field: usize, value: String| {
            texts[field].set(value.clone());
            if has_encoder {
                texts[1].set(String::new());
                texts[3].set(String::new());
            }
            let get = |i: usize| if i == field { value.clone() } else { (*texts[i]).clone() };
            d.emit(ModelsAction::SetContext { n: get(0), docs: get(1), encoder: get(2), images: get(3) });
        }
    };
    let on_field = |field: usize| {
        let apply = apply.clone();
        Callback::from(move |e: Event| apply(field, input_value(&e)))
    };
    let (on_n, on_docs, on_enc, on_images) = (on_field(0), on_field(1), on_field(2), on_field(3));
    let on_file = {
        let (d, v) = (d.clone(), p.on_view.clone());
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            if let Some(f) = input.files().and_then(|l| l.get(0)) {
                read_config(f, &d, &v);
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
            d.emit(ModelsAction::LoadConfig { name: "pasted config.json".into(), bytes: paste.as_bytes().to_vec() });
        })
    };
    let open_scaled = on_click(d, ModelsAction::OpenScaled);
    let export = p.outcome.clone().map(|o| {
        let d = p.on_view.clone();
        Callback::from(move |_: MouseEvent| {
            let name = format!(
                "{}-{}.json",
                o.run.spec.name.replace(|c: char| !c.is_ascii_alphanumeric() && c != '.' && c != '-', "_"),
                o.run.n
            );
            if let Err(e) = io::download_text(&o.to_json(), &name, "application/json") {
                d.emit(ViewAction::Notify(Level::Error, format!("download failed: {e}")));
            }
        })
    });
    let spec = &p.choice.spec;
    let entry = p.choice.gallery.and_then(|g| model::gallery().iter().find(|e| e.name == g));
    let encoder = spec.encoder.is_some();
    html! {
        <>
        <section class="panel model-form" aria-label="Model">
            <label class="field" for="model-gallery">{"Gallery model"}</label>
            <select id="model-gallery" onchange={on_model}>
                if let Some(what) = &p.reading {
                    <option value="" selected=true disabled=true>{ format!("{what} (loading the model reader…)") }</option>
                } else if p.choice.is_none() {
                    <option value="" selected=true disabled=true>{"choose a model"}</option>
                } else if p.choice.gallery.is_none() {
                    <option value="" selected=true disabled=true>{ format!("{} (config file)", spec.name) }</option>
                }
                { for options.iter().map(|(name, text)| html! {
                    <option value={*name} selected={p.choice.gallery == Some(*name)} title={text.clone()}>{ text.clone() }</option>
                }) }
            </select>
            // Nothing to describe before the first model is read (the reader loads on first use).
            if !p.choice.is_none() {
                // A long layer list (a hybrid's) is cut: the strip under Layer kinds shows every layer.
                <p class="formula" id="model-pattern" data-pattern={describe(spec)}>{ clipped(&describe(spec), 160) }</p>
                if let Some(e) = entry {
                    <p class="hint">{ e.notes }{" · "}<a class="doc-link" href={e.source} target="_blank" rel="noopener">{"config.json"}</a></p>
                } else {
                    <p class="hint">{ format!("from {}", p.choice.source) }</p>
                }
            }
            if !spec.notes.is_empty() {
                <div id="model-notes" aria-label="Notes on how the config was read">
                    { for spec.notes.iter().map(|n| html! { <p class="hint model-note">{ format!("Note: {}.", n.trim_end_matches('.')) }</p> }) }
                </div>
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
            <label class="field" for="model-n">{ if encoder { "Context length n (the decoder's)" } else { "Context length n" } }</label>
            <input id="model-n" type="text" inputmode="numeric" value={(*n_text).clone()} oninput={type_n} onchange={on_n}
                aria-describedby="model-n-hint" />
            <p class="hint" id="model-n-hint">{ format!("up to {MAX_MODEL_N} in the browser") }</p>
            if encoder {
                <label class="field" for="model-encoder">{"Encoder length (optional)"}</label>
                <input id="model-encoder" type="text" inputmode="numeric" placeholder={format!("default: n = {}", p.n)}
                    value={(*enc_text).clone()} oninput={type_enc} onchange={on_enc} aria-describedby="model-encoder-hint" />
                <p class="hint" id="model-encoder-hint">{"The encoder's positions come first (default: n of them), then the decoder's n. No packed documents here."}</p>
            } else {
                <div class="field-pair">
                    <div>
                        <label class="field" for="model-docs">{"Documents"}</label>
                        <input id="model-docs" type="text" placeholder="e.g. 65536,65536" value={(*docs_text).clone()}
                            oninput={type_docs} onchange={on_docs} aria-describedby="model-docs-hint" />
                        <p class="hint" id="model-docs-hint">{"lengths summing to n"}</p>
                    </div>
                    <div>
                        <label class="field" for="model-images">{"Image spans"}</label>
                        <input id="model-images" type="text" placeholder="e.g. 3:256" value={(*images_text).clone()}
                            oninput={type_images} onchange={on_images} aria-describedby="model-images-hint" />
                        <p class="hint" id="model-images-hint">{"START:LEN, read both ways"}</p>
                    </div>
                </div>
            }
        </section>
        <section class="panel model-actions" aria-label="Use the result">
            <button type="button" id="model-open-scaled" onclick={open_scaled} disabled={p.scaled.is_err() || p.choice.is_none()}>
                {"Open a scaled copy in the editor"}</button>
            if !p.choice.is_none() {
                <p class="hint" id="model-scale">{ match &p.scaled {
                    Ok(s) => format!("{} (a dense {}-layer stack)", s.summary, spec.layer_count()),
                    Err(e) => e.clone(),
                } }</p>
            }
            <button type="button" id="model-export" disabled={export.is_none()} onclick={export.unwrap_or_default()}
                title="the report, as hasseflow model --json prints it">{"Export report (JSON)"}</button>
        </section>
        </>
    }
}
