//! The first-visit introduction: what each view shows, and a short tour of the results the app
//! reproduces, each step loading its example through the store's ordinary actions (a preset, a
//! derivation, the Flow view). Closing it is remembered in localStorage; the header's *Tour*
//! button opens it again.

use std::collections::BTreeMap;

use hasseflow_core::derive::{BlockOptions, BuiltinFamily, ButterflyOptions};
use yew::prelude::*;

use crate::state::{Action, DesignerAction, FamilySpec, ImportAction, SideView, View, ViewAction};

/// Introduction properties.
#[derive(Properties, PartialEq, Clone)]
pub struct IntroProps {
    /// Store actions.
    pub dispatch: Callback<Action>,
    /// Closes the panel.
    pub on_close: Callback<MouseEvent>,
}

fn preset(name: &str, n: usize, params: &[(&str, &str)]) -> Action {
    Action::Import(ImportAction::LoadPreset {
        name: name.into(),
        n,
        // `extend`, not `collect`: BTreeMap's FromIterator sorts (a sort per call site in the wasm).
        params: {
            let mut map = BTreeMap::new();
            map.extend(params.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())));
            map
        },
    })
}

/// One tour step: its button id, label, explanation and the actions it dispatches in order.
fn steps() -> Vec<(&'static str, &'static str, &'static str, Vec<Action>)> {
    vec![
        (
            "tour-causal",
            "Causal: L* = 1",
            "Every position already reads all earlier ones, so one layer reaches the limit: a chain.",
            vec![
                preset("causal", 8, &[]),
                Action::View(ViewAction::SetSideView(SideView::Order)),
                Action::View(ViewAction::SetLayer(1)),
            ],
        ),
        (
            "tour-window",
            "Window: L* = 5",
            "A window of 4 reaches 3 positions further back per layer: R(L) grows until L* = 5, then equals causal's order.",
            vec![
                preset("sliding-window", 16, &[("w", "4")]),
                Action::View(ViewAction::SetSideView(SideView::Order)),
                Action::View(ViewAction::SetLayer(1)),
            ],
        ),
        (
            "tour-two-stream",
            "Block Two-Stream",
            "Derived, not designed: merging block generation's tasks gives the Block Two-Stream mask (Designer).",
            vec![
                Action::Designer(DesignerAction::Derive(FamilySpec::Builtin(BuiltinFamily::Block(BlockOptions::new(
                    6, 2,
                ))))),
                Action::View(ViewAction::SetView(View::Designer)),
            ],
        ),
        (
            "tour-butterfly",
            "Butterfly",
            "Bidirectional, fully supervised tasks merge into the Butterfly mask (Designer).",
            vec![
                Action::Designer(DesignerAction::Derive(FamilySpec::Builtin(BuiltinFamily::Butterfly(
                    ButterflyOptions::new(4),
                )))),
                Action::View(ViewAction::SetView(View::Designer)),
            ],
        ),
        (
            "tour-flow",
            "Flow = R(L)",
            "A random Transformer runs the window mask; the inputs each position is measurably influenced by are exactly R(L).",
            vec![
                preset("sliding-window", 16, &[("w", "4")]),
                Action::View(ViewAction::SetSideView(SideView::Flow)),
                Action::View(ViewAction::SetLayer(2)),
            ],
        ),
    ]
}

/// The introduction panel.
#[function_component(Intro)]
pub fn intro(p: &IntroProps) -> Html {
    let steps = steps();
    // The step last loaded, whose explanation is shown under the buttons.
    let shown = use_state(|| None::<usize>);
    let buttons = steps.iter().enumerate().map(|(i, (id, label, what, actions))| {
        let (d, set, actions) = (p.dispatch.clone(), shown.clone(), actions.clone());
        let pressed = *shown == Some(i);
        let onclick = Callback::from(move |_: MouseEvent| {
            actions.iter().cloned().for_each(|a| d.emit(a));
            set.set(Some(i));
        });
        html! {
            <button type="button" id={*id} title={*what} aria-pressed={pressed.to_string()} {onclick}>{ *label }</button>
        }
    });
    let explanation = match *shown {
        Some(i) => steps[i].2,
        None => "Each button loads its example into the editor or the Designer.",
    };
    html! {
        <section class="panel intro" id="intro" aria-labelledby="intro-title">
            <div class="intro-head">
                <h2 id="intro-title">{"What you are looking at"}</h2>
                <button type="button" id="intro-close" class="dismiss" onclick={p.on_close.clone()} aria-label="Close the introduction">{"×"}</button>
            </div>
            <p>{"The grid is an attention mask (row q reads column k), coloured by the layer at which each cell is first reached; the layer control steps L. "}
               <strong>{"Order"}</strong>{": the order the flow converges to. "}
               <strong>{"Flow"}</strong>{": measured in a Transformer. "}
               <strong>{"Designer"}</strong>{": masks derived from tasks. "}
               <strong>{"Models"}</strong>{": real models, long contexts."}</p>
            <div class="tour" role="group" aria-label="Tour of the results">
                <span class="tour-title">{"Tour:"}</span>
                { for buttons }
            </div>
            <p class="tour-what" id="tour-what" aria-live="polite">{ explanation }</p>
        </section>
    }
}
