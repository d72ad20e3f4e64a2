//! Reading form controls from their events: one place for the `target_unchecked_into` casts the
//! panels, the designer and the Flow view all need.

use yew::prelude::*;

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
