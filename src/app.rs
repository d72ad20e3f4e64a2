//! The placeholder page: pick a preset and a size, see the analysis the core computes in wasm.
//! The full editor (painting, layer stepping, Hasse view) is built on this in later work.

use std::collections::BTreeMap;

use hasseflow_core::Analysis;
use hasseflow_core::presets::{CATALOG, build_preset};
use yew::prelude::*;

/// Largest size offered here (the grid preview is text).
const MAX_PREVIEW: usize = 64;

#[function_component(App)]
pub fn app() -> Html {
    let preset = use_state(|| "sliding-window".to_string());
    let n = use_state(|| 8usize);
    let on_preset = {
        let preset = preset.clone();
        Callback::from(move |e: Event| {
            let target: web_sys::HtmlSelectElement = e.target_unchecked_into();
            preset.set(target.value());
        })
    };
    let on_n = {
        let n = n.clone();
        Callback::from(move |e: Event| {
            let target: web_sys::HtmlInputElement = e.target_unchecked_into();
            if let Ok(v) = target.value().parse::<usize>() {
                n.set(v.clamp(1, MAX_PREVIEW));
            }
        })
    };
    let result = build_preset(&preset, *n, &BTreeMap::new(), MAX_PREVIEW * 3).map(|m| {
        let a = Analysis::new(&m);
        (m, a)
    });
    let body = match result {
        Err(e) => html! { <p class="error" role="alert">{ e.to_string() }</p> },
        Ok((m, a)) => html! {
            <>
            <dl class="stats" id="stats">
                <dt>{"positions"}</dt><dd id="stat-n">{ m.n() }</dd>
                <dt>{"entries"}</dt><dd>{ m.count_ones() }</dd>
                <dt>{"L*"}</dt><dd id="stat-depth">{ a.depth() }</dd>
                <dt>{"dense"}</dt><dd>{ if a.is_dense() { "yes" } else { "no" } }</dd>
                <dt>{"classes"}</dt><dd>{ a.classes().len() }</dd>
                <dt>{"Hasse edges"}</dt><dd>{ a.hasse_edges().len() }</dd>
            </dl>
            <div class="grids">
                <figure><figcaption>{"mask M (row q reads column k)"}</figcaption>
                    <pre class="grid">{ m.to_row_strings().join("\n") }</pre></figure>
                <figure><figcaption>{"limit R"}</figcaption>
                    <pre class="grid">{ a.closure().to_row_strings().join("\n") }</pre></figure>
            </div>
            </>
        },
    };
    html! {
        <main>
            <h1>{"hasseflow"}</h1>
            <p class="lede">{"The order theory of attention masks. The full editor is on its way; this page runs the analysis core in your browser."}</p>
            <div class="controls">
                <label>{"preset "}
                    <select id="preset" onchange={on_preset}>
                        { for CATALOG.iter().map(|p| html! {
                            <option value={p.name} selected={p.name == preset.as_str()}>{ p.name }</option>
                        }) }
                    </select>
                </label>
                <label>{"n "}
                    <input id="size" type="number" min="1" max={MAX_PREVIEW.to_string()} value={n.to_string()} onchange={on_n} />
                </label>
            </div>
            { body }
        </main>
    }
}
