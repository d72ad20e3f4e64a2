//! The designer's family form: choose a built-in family, edit its options (the core's
//! [`BuiltinFamily`], one remembered per family so switching back keeps its values), press
//! Derive; or open a family file. Dispatches [`DesignerAction::Derive`]; the reducer does the rest.

use hasseflow_core::derive::{Aggregate, BuiltinFamily};
use hasseflow_core::presets::{Inner, TwoStreamOrder};
use yew::prelude::*;

use crate::state::{Action, DesignerAction, FamilySpec, Level, ViewAction};
use crate::ui::form::{checked, input_value, select_value};
use crate::ui::io;

/// Tokens of the families the form starts with (butterfly n=4 when nothing was derived).
const START_N: usize = 4;

/// What the form holds before "Derive": every built-in family with the options last set for it,
/// which one is chosen, and butterfly's last aggregate radius (kept while "P_k holds m@k" is on,
/// since `Aggregate::Mask` has no radius). `n` is shared: switching family keeps it.
#[derive(Clone, PartialEq)]
struct Draft {
    specs: [BuiltinFamily; 4],
    chosen: usize,
    radius: usize,
}

impl Draft {
    /// The form showing `shown` (a family file, or nothing, leaves butterfly chosen).
    fn new(shown: Option<BuiltinFamily>) -> Draft {
        let specs = BuiltinFamily::all(START_N);
        let at = |name: &str| specs.iter().position(|s| s.name() == name).unwrap_or(0);
        let mut d = Draft { chosen: at("butterfly"), specs, radius: 1 };
        if let Some(spec) = shown {
            d.chosen = at(spec.name());
            d.specs[d.chosen] = spec;
            if let BuiltinFamily::Butterfly(o) = spec
                && let Aggregate::Neighbours(r) = o.aggregate
            {
                d.radius = r;
            }
        }
        d
    }

    /// Chooses the family called `name`, carrying the current `n` over.
    fn choose(&mut self, name: &str) {
        let n = self.spec().n();
        self.chosen = self.specs.iter().position(|s| s.name() == name).unwrap_or(self.chosen);
        *self.specs[self.chosen].n_mut() = n;
    }

    /// Butterfly's aggregate: mask tokens, or the neighbours within the remembered radius.
    fn set_mask_token(&mut self, on: bool) {
        if let BuiltinFamily::Butterfly(o) = &mut self.specs[self.chosen] {
            o.aggregate = if on { Aggregate::Mask } else { Aggregate::Neighbours(self.radius) };
        }
    }

    /// Butterfly's aggregate radius (at least 1), remembered for when mask tokens are turned off.
    fn set_radius(&mut self, radius: usize) {
        if let BuiltinFamily::Butterfly(o) = &mut self.specs[self.chosen]
            && let Aggregate::Neighbours(r) = &mut o.aggregate
        {
            *r = radius.max(1);
            self.radius = *r;
        }
    }

    fn spec(&self) -> BuiltinFamily {
        self.specs[self.chosen]
    }
}

/// The name a family goes by in the menu.
fn title(spec: &BuiltinFamily) -> &'static str {
    match spec {
        BuiltinFamily::Autoregressive(_) => "autoregressive",
        BuiltinFamily::Block(_) => "block generation",
        BuiltinFamily::Butterfly(_) => "bidirectional fully supervised (butterfly)",
        BuiltinFamily::Mae(_) => "masked autoencoding (MAE)",
    }
}

/// The number typed into a field, or `old` when it is not one.
fn number(e: &Event, old: usize) -> usize {
    input_value(e).trim().parse().unwrap_or(old)
}

/// A change handler: edits a copy of the draft with `f` and stores it.
fn edit(draft: &UseStateHandle<Draft>, f: impl Fn(&mut Draft, &Event) + 'static) -> Callback<Event> {
    let draft = draft.clone();
    Callback::from(move |e: Event| {
        let mut d = (*draft).clone();
        f(&mut d, &e);
        draft.set(d);
    })
}

fn causal(on: bool) -> Inner {
    if on { Inner::Causal } else { Inner::Full }
}

/// Family form properties.
#[derive(Properties, PartialEq, Clone)]
pub struct FamilyFormProps {
    /// The built-in family of the design shown when the form opens (its starting values).
    pub shown: Option<BuiltinFamily>,
    /// Dispatch.
    pub dispatch: Callback<Action>,
}

/// The family form.
#[function_component(FamilyForm)]
pub fn family_form(p: &FamilyFormProps) -> Html {
    let draft = use_state(|| Draft::new(p.shown));
    // Edits the chosen family's options.
    let set = |f: fn(&mut BuiltinFamily, &Event)| {
        edit(&draft, move |d, e| {
            let chosen = d.chosen;
            f(&mut d.specs[chosen], e);
        })
    };
    let on_family = edit(&draft, |d, e| d.choose(&select_value(e)));
    let on_derive = {
        let (draft, d) = (draft.clone(), p.dispatch.clone());
        Callback::from(move |_: MouseEvent| {
            d.emit(Action::Designer(DesignerAction::Derive(FamilySpec::Builtin(draft.spec()))))
        })
    };
    let on_file = {
        let d = p.dispatch.clone();
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            if let Some(file) = input.files().and_then(|l| l.get(0)) {
                let name = file.name();
                let limit = hasseflow_core::format::MAX_INPUT_BYTES;
                if file.size() > limit as f64 {
                    d.emit(Action::View(ViewAction::Notify(
                        Level::Error,
                        format!("could not read {name}: it is over {} MB. Nothing was changed.", limit / 1_000_000),
                    )));
                } else {
                    let d = d.clone();
                    wasm_bindgen_futures::spawn_local(async move {
                        match io::read_file(file).await {
                            Ok(bytes) => {
                                d.emit(Action::Designer(DesignerAction::Derive(FamilySpec::File { name, bytes })))
                            }
                            Err(e) => d.emit(Action::View(ViewAction::Notify(
                                Level::Error,
                                format!("could not read {name}: {e}"),
                            ))),
                        }
                    });
                }
            }
            input.set_value("");
        })
    };
    let spec = draft.spec();
    let minimal = |on: bool| {
        html! {
            <label><input id="family-minimal" type="checkbox" checked={on}
                onchange={set(|s, e| match s {
                    BuiltinFamily::Block(o) => o.minimal = checked(e),
                    BuiltinFamily::Butterfly(o) => o.minimal = checked(e),
                    BuiltinFamily::Autoregressive(_) | BuiltinFamily::Mae(_) => {}
                })} />{" minimal layout"}</label>
        }
    };
    let options = match spec {
        BuiltinFamily::Autoregressive(o) => html! { <>
            <label><input id="family-bidirectional" type="checkbox" checked={o.bidirectional}
                onchange={set(|s, e| if let BuiltinFamily::Autoregressive(o) = s { o.bidirectional = checked(e) })} />{" bidirectional tasks"}</label>
            <label><input id="family-pad" type="checkbox" checked={o.pad}
                onchange={set(|s, e| if let BuiltinFamily::Autoregressive(o) = s { o.pad = checked(e) })} />{" pad"}</label>
        </> },
        BuiltinFamily::Block(o) => html! { <>
            <label>{"block s "}<input id="family-block" type="number" min="1" value={o.block.to_string()}
                onchange={set(|s, e| if let BuiltinFamily::Block(o) = s { o.block = number(e, o.block) })} /></label>
            <label>{"prompt "}<input id="family-prompt" type="number" min="0" value={o.prompt.to_string()}
                onchange={set(|s, e| if let BuiltinFamily::Block(o) = s { o.prompt = number(e, o.prompt) })} /></label>
            <label><input id="family-clean-causal" type="checkbox" checked={o.clean == Inner::Causal}
                onchange={set(|s, e| if let BuiltinFamily::Block(o) = s { o.clean = causal(checked(e)) })} />{" causal inside clean blocks"}</label>
            <label><input id="family-query-causal" type="checkbox" checked={o.query == Inner::Causal}
                onchange={set(|s, e| if let BuiltinFamily::Block(o) = s { o.query = causal(checked(e)) })} />{" causal inside mask blocks"}</label>
            <label><input id="family-interleaved" type="checkbox" checked={o.order == TwoStreamOrder::Interleaved}
                onchange={set(|s, e| if let BuiltinFamily::Block(o) = s {
                    o.order = if checked(e) { TwoStreamOrder::Interleaved } else { TwoStreamOrder::Grouped };
                })} />{" interleaved order"}</label>
            { minimal(o.minimal) }
        </> },
        BuiltinFamily::Butterfly(o) => html! { <>
            { minimal(o.minimal) }
            <label><input id="family-mask-token" type="checkbox" checked={o.aggregate == Aggregate::Mask}
                onchange={edit(&draft, |d, e| d.set_mask_token(checked(e)))} />{" P_k holds m@k"}</label>
            if let Aggregate::Neighbours(radius) = o.aggregate {
                <label>{"aggregate radius "}<input id="family-radius" type="number" min="1" value={radius.to_string()}
                    onchange={edit(&draft, |d, e| d.set_radius(number(e, d.radius)))} /></label>
            }
        </> },
        BuiltinFamily::Mae(o) => html! { <>
            <label>{"span "}<input id="family-span" type="number" min="1" value={o.span.to_string()}
                onchange={set(|s, e| if let BuiltinFamily::Mae(o) = s { o.span = number(e, o.span) })} /></label>
            <label>{"stride "}<input id="family-stride" type="number" min="0" value={o.stride.to_string()}
                onchange={set(|s, e| if let BuiltinFamily::Mae(o) = s { o.stride = number(e, o.stride) })} /></label>
            <label><input id="family-causal-encoder" type="checkbox" checked={o.causal_encoder}
                onchange={set(|s, e| if let BuiltinFamily::Mae(o) = s { o.causal_encoder = checked(e) })} />{" causal encoder"}</label>
        </> },
    };
    html! {
        <section class="panel family-form" aria-label="Task family">
            <div class="toolrow">
                <label>{"Family "}
                    <select id="family" onchange={on_family}>
                        { for draft.specs.iter().map(|s| html! {
                            <option value={s.name()} selected={s.name() == spec.name()}>{ title(s) }</option>
                        }) }
                    </select>
                </label>
                <label>{"n "}<input id="family-n" type="number" min="1" value={spec.n().to_string()}
                    onchange={set(|s, e| *s.n_mut() = number(e, s.n()))} /></label>
                { options }
                <button type="button" id="derive" class="primary" onclick={on_derive}>{"Derive"}</button>
                <label class="button" for="family-file">{"Family file…"}</label>
                <input id="family-file" class="visually-hidden" type="file" accept=".json,application/json" onchange={on_file} />
            </div>
        </section>
    }
}
