//! Reading form controls from their events: one place for the `target_unchecked_into` casts the
//! panels, the designer and the Flow view all need; and [`on_click`], the handler of every control
//! that dispatches a fixed action on a mouse event.

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
