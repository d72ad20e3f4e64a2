//! Reading form controls from their events: one place for the `target_unchecked_into` casts the
//! panels, the designer and the Flow view all need; [`on_click`], the handler of every control
//! that dispatches a fixed action on a mouse event; and [`param_control`], a named parameter's
//! control by its kind (presets and task families).

use hasseflow_core::presets::{ParamKind, ParamSpec};
use yew::prelude::*;

/// A mouse-event handler that dispatches `action` (of the whole store or of one group): buttons'
/// clicks, and the Flow maps' mouse leave. One closure type per action type for every such
/// control (a closure written at each is its own type, with its own code and drop glue in the
/// wasm).
pub fn on_click<A: Clone + 'static>(dispatch: &Callback<A>, action: A) -> Callback<MouseEvent> {
    let d = dispatch.clone();
    Callback::from(move |_: MouseEvent| d.emit(action.clone()))
}

/// The value of the `<input>` that fired `e`.
pub fn input_value(e: &Event) -> String {
    let t: web_sys::HtmlInputElement = e.target_unchecked_into();
    t.value()
}

/// The value of the `<select>` that fired `e`.
pub fn select_value(e: &Event) -> String {
    let t: web_sys::HtmlSelectElement = e.target_unchecked_into();
    t.value()
}

/// Whether the checkbox that fired `e` is ticked.
pub fn checked(e: &Event) -> bool {
    let t: web_sys::HtmlInputElement = e.target_unchecked_into();
    t.checked()
}

/// The control of one named parameter by its kind, for the preset picker and the designer's
/// family form alike: a checkbox for a flag, a number field for an integer or a fraction, a text
/// field for a list, a menu for a choice, or with `toggle` a checkbox for a two-word choice
/// (ticked: its second word). `on_change` gets the new text.
pub fn param_control(spec: &ParamSpec, id: String, value: &str, toggle: bool, on_change: Callback<String>) -> Html {
    let kind = spec.kind;
    // One handler for every kind (one closure type, so one copy of its code in the wasm): the
    // new text as the control's kind reads it.
    let onchange = on_change.reform(move |e: Event| match kind {
        ParamKind::Bool => checked(&e).to_string(),
        ParamKind::Choice(&[off, on]) if toggle => if checked(&e) { on } else { off }.to_string(),
        ParamKind::Choice(_) => select_value(&e),
        ParamKind::Int { .. } | ParamKind::Fraction | ParamKind::IntList => input_value(&e),
    });
    match kind {
        ParamKind::Bool => html! {
            <input {id} type="checkbox" checked={value == "true"} {onchange} />
        },
        ParamKind::Choice(&[_, on]) if toggle => html! {
            <input {id} type="checkbox" checked={value == on} {onchange} />
        },
        ParamKind::Int { min } => html! {
            <input {id} type="number" min={min.to_string()} value={value.to_string()} {onchange} />
        },
        ParamKind::Fraction => html! {
            <input {id} class="fraction" type="number" min="0" max="1" step="0.01" value={value.to_string()} {onchange} />
        },
        ParamKind::IntList => html! {
            <input {id} type="text" value={value.to_string()} placeholder="e.g. 3,2,4" {onchange} />
        },
        ParamKind::Choice(options) => html! {
            <select {id} {onchange}>
                { for options.iter().map(|o| html! { <option value={*o} selected={*o == value}>{ *o }</option> }) }
            </select>
        },
    }
}
