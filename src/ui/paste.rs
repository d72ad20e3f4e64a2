//! The paste box under Import: a FlexAttention `mask_mod` (or any text the importer reads)
//! pasted as text and evaluated at a chosen size. The reducer does the reading
//! ([`Action::ImportText`]); a refused text leaves the mask as it was.

use yew::prelude::*;

use super::form::input_value;
use crate::state::{Action, MAX_EDIT_N};

/// Paste box properties.
#[derive(Properties, PartialEq, Clone)]
pub struct PasteProps {
    /// The editor's size, the default `n`.
    pub n: usize,
    /// Dispatch.
    pub dispatch: Callback<Action>,
}

const EXAMPLE: &str =
    "W = 4\n\ndef mask_mod(b, h, q_idx, kv_idx):\n    return (kv_idx <= q_idx) & (q_idx - kv_idx < W)";

/// A collapsible text box with a size field and an Import button.
#[function_component(PasteImport)]
pub fn paste_import(props: &PasteProps) -> Html {
    let text = use_state(String::new);
    let n = use_state(|| props.n.to_string());
    let on_text = {
        let text = text.clone();
        Callback::from(move |e: InputEvent| {
            let t: web_sys::HtmlTextAreaElement = e.target_unchecked_into();
            text.set(t.value());
        })
    };
    let on_n = {
        let n = n.clone();
        Callback::from(move |e: Event| n.set(input_value(&e)))
    };
    let submit = {
        let (text, n, dispatch, fallback) = (text.clone(), n.clone(), props.dispatch.clone(), props.n);
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let n = n.trim().parse().unwrap_or(fallback);
            dispatch.emit(Action::ImportText { name: "the pasted text".into(), text: (*text).clone(), n });
        })
    };
    html! {
        <details class="paste" id="paste-import">
            <summary>{"Paste a mask_mod…"}</summary>
            <form onsubmit={submit}>
                <label for="paste-text">{"FlexAttention mask_mod (Python), or mask JSON / grid"}</label>
                <textarea id="paste-text" rows="7" spellcheck="false" placeholder={EXAMPLE}
                    value={(*text).clone()} oninput={on_text} />
                <div class="toolrow">
                    <label for="paste-n">{"n "}</label>
                    <input id="paste-n" type="number" min="1" max={MAX_EDIT_N.to_string()} value={(*n).clone()} onchange={on_n} />
                    <button type="submit" id="paste-import-button">{"Import text"}</button>
                </div>
                <p class="hint">{"def or lambda of (b, h, q_idx, kv_idx) with & | ~, comparisons, + - * // %, integer constants, and_masks/or_masks. Anything else is refused with its line."}</p>
            </form>
        </details>
    }
}
