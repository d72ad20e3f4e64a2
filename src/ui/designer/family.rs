//! The designer's family form: choose a built-in family, edit its parameters (the core's family
//! table, [`FAMILIES`]: each parameter's control by its kind, one set of values remembered per
//! family so switching back keeps them), press Derive; or open a family file. The core builds the
//! family from the values ([`BuiltinFamily::from_params`]); [`DesignerAction::Derive`] hands it to
//! the reducer.

use std::collections::BTreeMap;

use hasseflow_core::derive::{BuiltinFamily, FAMILIES, FamilyEntry, FamilyParam};
use hasseflow_core::presets::ParamKind;
use yew::prelude::*;

use crate::state::{DesignerAction, FamilySpec, Level, ViewAction};
use crate::ui::form::{param_control, select_value};
use crate::ui::io;

/// What the form holds before "Derive": every built-in family's parameters as text (in
/// [`FAMILIES`]' order; the table's defaults until edited) and which family is chosen. `n` is
/// shared: switching family keeps it.
#[derive(Clone, PartialEq)]
struct Draft {
    values: Vec<BTreeMap<String, String>>,
    chosen: usize,
}

/// Where the family called `name` stands in [`FAMILIES`].
fn position(name: &str) -> Option<usize> {
    FAMILIES.iter().position(|e| e.name == name)
}

impl Draft {
    /// The form showing `shown` (a family file, or nothing, leaves butterfly chosen).
    fn new(shown: Option<BuiltinFamily>) -> Draft {
        // `extend`, not `collect`: BTreeMap's FromIterator sorts (a sort per call site in the wasm).
        let defaults = |e: &FamilyEntry| {
            let mut values = BTreeMap::new();
            values.extend(e.params.iter().map(|p| (p.spec.name.into(), p.spec.default.into())));
            values
        };
        let mut d =
            Draft { values: FAMILIES.iter().map(defaults).collect(), chosen: position("butterfly").unwrap_or(0) };
        if let Some(spec) = shown
            && let Some(at) = position(spec.name())
        {
            d.chosen = at;
            d.values[at].extend(spec.params());
        }
        d
    }

    fn entry(&self) -> &'static FamilyEntry {
        &FAMILIES[self.chosen]
    }

    fn values(&self) -> &BTreeMap<String, String> {
        &self.values[self.chosen]
    }

    /// Chooses the family called `name`, carrying the current `n` over.
    fn choose(&mut self, name: &str) {
        let n = self.values().get("n").cloned();
        self.chosen = position(name).unwrap_or(self.chosen);
        let chosen = self.chosen;
        self.values[chosen].extend(n.map(|n| ("n".to_string(), n)));
    }

    /// Sets parameter `p` of the chosen family to `text`, unless its kind refuses the text (the
    /// field then keeps the last good value, as a number field that is not one does).
    fn set(&mut self, p: &FamilyParam, text: String) {
        if p.spec.check(&text).is_ok() {
            let chosen = self.chosen;
            self.values[chosen].insert(p.spec.name.into(), text);
        }
    }

    /// Whether `p` is shown now (butterfly's radius only with neighbours).
    fn shows(&self, p: &FamilyParam) -> bool {
        p.shown_if.is_none_or(|(name, value)| self.values().get(name).is_some_and(|v| v == value))
    }
}

/// The form's control of parameter `p` (`id` `family-NAME`, `family-NAME-WORD` for a two-word
/// choice shown as a checkbox), in a label with the table's words.
fn control(draft: &UseStateHandle<Draft>, p: &'static FamilyParam) -> Html {
    let value = draft.values().get(p.spec.name).cloned().unwrap_or_default();
    let id = format!("family-{}", p.spec.name.replace('_', "-"));
    let (id, ticked) = match p.spec.kind {
        ParamKind::Bool => (id, true),
        ParamKind::Choice(&[_, on]) => (format!("{id}-{on}"), true),
        _ => (id, false),
    };
    let on_change = {
        let draft = draft.clone();
        Callback::from(move |text: String| {
            let mut d = (*draft).clone();
            d.set(p, text);
            draft.set(d);
        })
    };
    let input = param_control(&p.spec, id, &value, true, on_change);
    // Keyed by name: when a control appears or goes (radius with mask tokens), the others keep
    // their elements, so a checkbox being clicked is not swapped for its neighbour mid-event.
    if ticked {
        html! { <label key={p.spec.name}>{ input }{ format!(" {}", p.label) }</label> }
    } else {
        html! { <label key={p.spec.name}>{ format!("{} ", p.label) }{ input }</label> }
    }
}

/// Family form properties.
#[derive(Properties, PartialEq, Clone)]
pub struct FamilyFormProps {
    /// The built-in family of the design shown when the form opens (its starting values).
    pub shown: Option<BuiltinFamily>,
    /// Derive a family.
    pub on_designer: Callback<DesignerAction>,
    /// Messages (a file too large or unreadable, parameters the core refuses).
    pub on_view: Callback<ViewAction>,
}

/// The family form.
#[function_component(FamilyForm)]
pub fn family_form(p: &FamilyFormProps) -> Html {
    let draft = use_state(|| Draft::new(p.shown));
    let on_family = {
        let draft = draft.clone();
        Callback::from(move |e: Event| {
            let mut d = (*draft).clone();
            d.choose(&select_value(&e));
            draft.set(d);
        })
    };
    let on_derive = {
        let (draft, d, v) = (draft.clone(), p.on_designer.clone(), p.on_view.clone());
        Callback::from(move |_: MouseEvent| match BuiltinFamily::from_params(draft.entry().name, draft.values()) {
            Ok(spec) => d.emit(DesignerAction::Derive(FamilySpec::Builtin(spec))),
            Err(e) => v.emit(ViewAction::Notify(Level::Error, e.to_string())),
        })
    };
    let on_file = {
        let (d, v) = (p.on_designer.clone(), p.on_view.clone());
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            if let Some(file) = input.files().and_then(|l| l.get(0)) {
                let name = file.name();
                let limit = hasseflow_core::format::MAX_INPUT_BYTES;
                if file.size() > limit as f64 {
                    v.emit(ViewAction::Notify(
                        Level::Error,
                        format!("could not read {name}: it is over {} MB. Nothing was changed.", limit / 1_000_000),
                    ));
                } else {
                    let (d, v) = (d.clone(), v.clone());
                    wasm_bindgen_futures::spawn_local(async move {
                        match io::read_file(file).await {
                            Ok(bytes) => d.emit(DesignerAction::Derive(FamilySpec::File { name, bytes })),
                            Err(e) => v.emit(ViewAction::Notify(Level::Error, format!("could not read {name}: {e}"))),
                        }
                    });
                }
            }
            input.set_value("");
        })
    };
    let chosen = draft.entry().name;
    let params = draft.entry().params.iter().filter(|p| draft.shows(p)).map(|p| control(&draft, p));
    html! {
        <section class="panel family-form" aria-label="Task family">
            <div class="toolrow">
                <label>{"Family "}
                    <select id="family" onchange={on_family}>
                        { for FAMILIES.iter().map(|e| html! {
                            <option value={e.name} selected={e.name == chosen}>{ e.title }</option>
                        }) }
                    </select>
                </label>
                { for params }
                <button type="button" id="derive" class="primary" onclick={on_derive}>{"Derive"}</button>
                <label class="button" for="family-file">{"Family file…"}</label>
                <input id="family-file" class="visually-hidden" type="file" accept=".json,application/json" onchange={on_file} />
            </div>
        </section>
    }
}
