//! The paste box under Import: a FlexAttention `mask_mod` (or any text the importer reads)
//! pasted as text and evaluated at a chosen size, batch and head. The reducer does the reading
//! ([`ImportAction::ImportText`]); a refused text leaves the mask as it was, and a `mask_mod` refused at
//! a place is shown under the box like a Python traceback (the store's [`PasteRefusal`]), its
//! place selected in the text.

use std::rc::Rc;

use yew::prelude::*;

use super::form::input_value;
use crate::state::{ImportAction, MAX_EDIT_N, PasteRefusal};

/// Paste box properties.
#[derive(Properties, PartialEq, Clone)]
pub struct PasteProps {
    /// The editor's size, the default `n`.
    pub n: usize,
    /// Where the latest paste was refused, from the store.
    pub refusal: Option<Rc<PasteRefusal>>,
    /// The pasted text into the editor.
    pub on_import: Callback<ImportAction>,
}

const EXAMPLE: &str =
    "W = 4\n\ndef mask_mod(b, h, q_idx, kv_idx):\n    return (kv_idx <= q_idx) & (q_idx - kv_idx < W)";

const HINT: &str = "Runs real mask code: factories, closures, partial, module-level tensors and lookups, torch \
                    ops, attn_gym and transformers.masking_utils masks. Anything unsupported is refused with \
                    its line.";

/// A collapsible text box with size, batch and head fields and an Import button.
#[function_component(PasteImport)]
pub fn paste_import(props: &PasteProps) -> Html {
    let text = use_state(String::new);
    let n = use_state(|| props.n.to_string());
    let batch = use_state(|| "0".to_string());
    let head = use_state(|| "0".to_string());
    let textarea = use_node_ref();
    use_select_refusal(&textarea, props.refusal.clone());
    let on_text = {
        let text = text.clone();
        Callback::from(move |e: InputEvent| {
            let t: web_sys::HtmlTextAreaElement = e.target_unchecked_into();
            text.set(t.value());
        })
    };
    let on_field = |field: &UseStateHandle<String>| {
        let field = field.clone();
        Callback::from(move |e: Event| field.set(input_value(&e)))
    };
    let submit = {
        let (text, n, batch, head) = (text.clone(), n.clone(), batch.clone(), head.clone());
        let (dispatch, fallback) = (props.on_import.clone(), props.n);
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            dispatch.emit(ImportAction::ImportText {
                name: "the pasted text".into(),
                text: (*text).clone(),
                n: n.trim().parse().unwrap_or(fallback),
                batch: batch.trim().parse().unwrap_or(0),
                head: head.trim().parse().unwrap_or(0),
            });
        })
    };
    let refused = props.refusal.is_some();
    html! {
        <details class="paste" id="paste-import">
            <summary>{"Paste a mask_mod…"}</summary>
            <form onsubmit={submit}>
                <label for="paste-text">{"FlexAttention mask_mod (Python), or mask JSON / grid"}</label>
                <textarea id="paste-text" rows="7" spellcheck="false" placeholder={EXAMPLE} ref={textarea}
                    aria-invalid={refused.then_some("true")} aria-describedby={refused.then_some("paste-refusal")}
                    value={(*text).clone()} oninput={on_text} />
                if let Some(r) = &props.refusal {
                    <Refusal refusal={r.clone()} />
                }
                <div class="toolrow paste-fields">
                    <label for="paste-n" title="size: q_idx and kv_idx run over 0..n">{"n"}</label>
                    <input id="paste-n" type="number" min="1" max={MAX_EDIT_N.to_string()} value={(*n).clone()}
                        onchange={on_field(&n)} />
                    <label for="paste-b" title="the batch index b the mask is read at">{"b"}</label>
                    <input id="paste-b" class="index" type="number" min="0" value={(*batch).clone()}
                        onchange={on_field(&batch)} />
                    <label for="paste-h" title="the head index h the mask is read at">{"h"}</label>
                    <input id="paste-h" class="index" type="number" min="0" value={(*head).clone()}
                        onchange={on_field(&head)} />
                    <button type="submit" id="paste-import-button">{"Import text"}</button>
                </div>
                <p class="hint">{HINT}</p>
            </form>
        </details>
    }
}

/// Refusal properties.
#[derive(Properties, PartialEq, Clone)]
struct RefusalProps {
    refusal: Rc<PasteRefusal>,
}

/// The refused line with a caret under the column, and why (all text, never markup).
#[function_component(Refusal)]
fn refusal(p: &RefusalProps) -> Html {
    let r = &p.refusal;
    html! {
        <div id="paste-refusal" class="paste-refusal" role="alert">
            <p class="refusal-where">{ format!("Refused at line {}, column {}:", r.line, r.col) }</p>
            <pre class="refusal-code">{ r.source.clone() }{ "\n" }<span class="refusal-caret">{ r.caret.clone() }</span></pre>
            <p class="refusal-what">{ r.what.clone() }</p>
        </div>
    }
}

/// Each new refusal selects its place in the text (focus scrolls the box to it). A refusal that
/// was already there when the box was created (the editor shown again) is left alone.
#[hook]
fn use_select_refusal(textarea: &NodeRef, refusal: Option<Rc<PasteRefusal>>) {
    let seen = use_mut_ref(|| refusal.as_ref().map(|r| r.seq));
    let textarea = textarea.clone();
    use_effect_with(refusal, move |r| {
        let seq = r.as_ref().map(|r| r.seq);
        if *seen.borrow() != seq {
            *seen.borrow_mut() = seq;
            if let (Some(r), Some(t)) = (r, textarea.cast::<web_sys::HtmlTextAreaElement>()) {
                let _ = t.set_selection_range(r.select.0, r.select.1);
                let _ = t.focus();
            }
        }
    });
}
