//! The page's header (title, the view tabs, the tour and theory links, the theme switch) and the
//! status line under it, where messages appear without covering anything.

use yew::prelude::*;

use super::form::on_click;
use super::palette::Theme;
use crate::state::{Level, Message, View, ViewAction};

/// Header properties.
#[derive(Properties, PartialEq, Clone)]
pub struct HeaderProps {
    /// The view shown.
    pub view: View,
    /// Colour theme.
    pub theme: Theme,
    /// Whether the introduction is open (its Tour button is hidden meanwhile).
    pub intro_open: bool,
    /// Opens the introduction.
    pub on_open_intro: Callback<MouseEvent>,
    /// Switches the theme.
    pub on_toggle_theme: Callback<MouseEvent>,
    /// The view shown.
    pub on_view: Callback<ViewAction>,
}

/// The page header.
#[function_component(Header)]
pub fn header(p: &HeaderProps) -> Html {
    let set_tab = |v: View| on_click(&p.on_view, ViewAction::SetView(v));
    html! {
        <header>
            <h1>{"hasseflow"}</h1>
            <p class="lede">{"Paint an attention mask, step through layers, read the order it converges to."}</p>
            <div class="segmented views" role="tablist" aria-label="View">
                <button type="button" id="tab-editor" role="tab" aria-selected={(p.view == View::Editor).to_string()}
                    onclick={set_tab(View::Editor)}>{"Editor"}</button>
                <button type="button" id="tab-designer" role="tab" aria-selected={(p.view == View::Designer).to_string()}
                    onclick={set_tab(View::Designer)}>{"Designer"}</button>
                <button type="button" id="tab-models" role="tab" aria-selected={(p.view == View::Models).to_string()}
                    onclick={set_tab(View::Models)}
                    title="real models' attention (gallery or config.json) at long contexts">{"Models"}</button>
            </div>
            if !p.intro_open {
                <button type="button" id="intro-open" onclick={p.on_open_intro.clone()}
                    title="What each view shows, and a short tour of the results">{"Tour"}</button>
            }
            // docs/THEORY.md, copied next to index.html by trunk (index.html's copy-file link).
            <a id="theory-link" class="doc-link" href="THEORY.md" target="_blank" rel="noopener"
                title="The theory behind the app: definitions, results, reconstructed choices">{"Theory"}</a>
            <button type="button" id="theme" class="theme" onclick={p.on_toggle_theme.clone()}
                title="Switch between the light and dark themes">{ if p.theme == Theme::Dark { "Light theme" } else { "Dark theme" } }</button>
        </header>
    }
}

/// Status line properties.
#[derive(Properties, PartialEq, Clone)]
pub struct StatusProps {
    /// The latest message, if any.
    pub message: Option<Message>,
    /// Dismisses the message.
    pub on_view: Callback<ViewAction>,
}

/// The reserved line for messages: a live region that stays in the page, so changes are read
/// out. Errors interrupt (role alert); info is read out politely by the line around it.
#[function_component(StatusLine)]
pub fn status_line(p: &StatusProps) -> Html {
    let message = p.message.clone().map(|m| {
        let dismiss = on_click(&p.on_view, ViewAction::Dismiss);
        let (class, role) =
            if m.level == Level::Error { ("message error", Some("alert")) } else { ("message info", None) };
        html! {
            <div id="message" class={class} role={role}>
                <span>{ m.text }</span>
                <button type="button" class="dismiss" onclick={dismiss} aria-label="Dismiss message">{"×"}</button>
            </div>
        }
    });
    html! { <div id="status-line" class="status-line" aria-live="polite">{ for message }</div> }
}
