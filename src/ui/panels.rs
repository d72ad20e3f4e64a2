//! Small presentational panels: tools, preset picker, layer control with legend and growth plot,
//! statistics. Each takes cheap props and emits callbacks; none computes analysis.

use std::collections::BTreeMap;
use std::rc::Rc;

use hasseflow_core::interop::BlockStats;
use hasseflow_core::presets::{CATALOG, preset_spec};
use hasseflow_core::{ClassWiring, CoverWiring, SparsifyOptions};
use yew::prelude::*;

use super::chart;
use super::form::{checked, input_value, on_click, param_control, select_value};
use super::palette::{Palette, Theme, swatch};
use crate::state::{EditAction, ImportAction, MAX_EDIT_N, Tool, ViewAction};

/// Tool bar properties.
#[derive(Properties, PartialEq, Clone)]
pub struct ToolsProps {
    /// Active tool.
    pub tool: Tool,
    /// Mask side.
    pub n: usize,
    /// Undo available.
    pub can_undo: bool,
    /// Redo available.
    pub can_redo: bool,
    /// Sparsify options.
    pub sparsify: SparsifyOptions,
    /// The editor's edits.
    pub on_edit: Callback<EditAction>,
}

/// Painting tools, undo/redo, size, and whole-mask operations.
#[function_component(Tools)]
pub fn tools(p: &ToolsProps) -> Html {
    let act = |a: EditAction| on_click(&p.on_edit, a);
    let on_size = {
        let d = p.on_edit.clone();
        Callback::from(move |e: Event| {
            if let Ok(v) = input_value(&e).trim().parse::<usize>() {
                d.emit(EditAction::Resize(v));
            }
        })
    };
    let on_sparsify = {
        let d = p.on_edit.clone();
        Callback::from(move |e: Event| {
            let o = match select_value(&e).as_str() {
                "cycle" => SparsifyOptions { classes: ClassWiring::Cycle, covers: CoverWiring::AllPairs },
                "one" => SparsifyOptions { classes: ClassWiring::Clique, covers: CoverWiring::OneEdge },
                "sparsest" => SparsifyOptions { classes: ClassWiring::Cycle, covers: CoverWiring::OneEdge },
                _ => SparsifyOptions::default(),
            };
            d.emit(EditAction::SetSparsify(o));
        })
    };
    let sp = match (p.sparsify.classes, p.sparsify.covers) {
        (ClassWiring::Clique, CoverWiring::AllPairs) => "theory",
        (ClassWiring::Cycle, CoverWiring::AllPairs) => "cycle",
        (ClassWiring::Clique, CoverWiring::OneEdge) => "one",
        (ClassWiring::Cycle, CoverWiring::OneEdge) => "sparsest",
    };
    html! {
        <section class="panel tools" aria-label="Editing tools">
            <div class="toolrow" role="toolbar" aria-label="Paint tool">
                { for Tool::ALL.iter().map(|&(t, name, key)| html! {
                    <button type="button" class={classes!("tool", (p.tool == t).then_some("on"))}
                        id={format!("tool-{}", name.to_ascii_lowercase().replace(' ', "-"))}
                        aria-pressed={(p.tool == t).to_string()} title={format!("{name} ({})", key.to_ascii_uppercase())}
                        onclick={act(EditAction::SetTool(t))}>{ name }</button>
                }) }
            </div>
            <div class="toolrow">
                <button type="button" id="undo" disabled={!p.can_undo} onclick={act(EditAction::Undo)} title="Undo (Ctrl+Z)">{"Undo"}</button>
                <button type="button" id="redo" disabled={!p.can_redo} onclick={act(EditAction::Redo)} title="Redo (Ctrl+Shift+Z)">{"Redo"}</button>
                <label class="size">{"N "}
                    <input id="size" type="number" min="1" max={MAX_EDIT_N.to_string()} value={p.n.to_string()} onchange={on_size} />
                </label>
            </div>
            <div class="toolrow">
                <button type="button" id="op-transpose" onclick={act(EditAction::Transpose)} title="Swap queries and keys: reverses every Hasse edge">{"Transpose"}</button>
                <button type="button" id="op-invert" onclick={act(EditAction::Invert)} title="Complement every cell">{"Invert"}</button>
                <button type="button" id="op-densify" onclick={act(EditAction::Densify)} title="Replace by the limit closure: one layer suffices">{"Densify"}</button>
                <button type="button" id="op-sparsify" onclick={act(EditAction::Sparsify)} title="Keep own class and covered classes: same order, fewer entries">{"Sparsify"}</button>
                <label class="visually-hidden" for="sparsify-mode">{"Sparsify wiring"}</label>
                <select id="sparsify-mode" onchange={on_sparsify} title="Sparsify wiring">
                    <option value="theory" selected={sp == "theory"}>{"cliques + all covers"}</option>
                    <option value="cycle" selected={sp == "cycle"}>{"cycles + all covers"}</option>
                    <option value="one" selected={sp == "one"}>{"cliques + one edge"}</option>
                    <option value="sparsest" selected={sp == "sparsest"}>{"cycles + one edge"}</option>
                </select>
                <button type="button" id="op-clear" onclick={act(EditAction::Clear)}>{"Clear"}</button>
            </div>
        </section>
    }
}

/// Preset picker properties.
#[derive(Properties, PartialEq, Clone)]
pub struct PresetProps {
    /// Presets into the editor.
    pub on_import: Callback<ImportAction>,
}

/// The form draft of the preset picker (local: nothing else reads it until "Load").
#[derive(Clone, PartialEq)]
struct Draft {
    name: String,
    n: String,
    params: BTreeMap<String, String>,
}

/// The whole core catalog with each preset's parameters.
#[function_component(PresetPicker)]
pub fn preset_picker(p: &PresetProps) -> Html {
    let draft = use_state(|| Draft { name: "sliding-window".into(), n: "16".into(), params: BTreeMap::new() });
    let Some(spec) = preset_spec(&draft.name) else { return html! {} };
    let on_name = {
        let draft = draft.clone();
        Callback::from(move |e: Event| {
            draft.set(Draft { name: select_value(&e), n: draft.n.clone(), params: BTreeMap::new() });
        })
    };
    let on_n = {
        let draft = draft.clone();
        Callback::from(move |e: Event| draft.set(Draft { n: input_value(&e), ..(*draft).clone() }))
    };
    let load = {
        let (draft, d) = (draft.clone(), p.on_import.clone());
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let n = draft.n.trim().parse::<usize>().unwrap_or(0);
            d.emit(ImportAction::LoadPreset { name: draft.name.clone(), n, params: draft.params.clone() });
        })
    };
    let params = spec.params.iter().map(|ps| {
        let id = format!("param-{}", ps.name);
        let value = draft.params.get(ps.name).cloned().unwrap_or_else(|| ps.default.to_string());
        let on_change = {
            let (draft, name) = (draft.clone(), ps.name);
            Callback::from(move |v: String| {
                let mut d = (*draft).clone();
                d.params.insert(name.to_string(), v);
                draft.set(d);
            })
        };
        html! {
            <label class="param" for={id.clone()} title={ps.help}>
                <span>{ ps.name }</span>{ param_control(ps, id, &value, false, on_change) }
            </label>
        }
    });
    html! {
        <section class="panel presets" aria-label="Presets">
            <form onsubmit={load} novalidate=true>
                <div class="toolrow">
                    <label for="preset">{"Preset"}</label>
                    <select id="preset" onchange={on_name}>
                        { for CATALOG.iter().map(|c| html! {
                            <option value={c.name} selected={c.name == draft.name}>{ c.name }</option>
                        }) }
                    </select>
                    // One item, so that a narrow row never leaves "n" apart from its box.
                    <label>{"n "}
                        <input id="preset-n" type="number" min="1" max={MAX_EDIT_N.to_string()} value={draft.n.clone()} onchange={on_n} />
                    </label>
                    <button type="submit" id="preset-load" class="primary">{"Load"}</button>
                </div>
                <p class="formula" title={spec.positions}>{ format!("q reads k iff {}", spec.formula) }</p>
                <div class="params">{ for params }</div>
            </form>
        </section>
    }
}

/// Layer control properties.
#[derive(Properties, PartialEq, Clone)]
pub struct LayerProps {
    /// Current layer.
    pub layer: usize,
    /// `L*`.
    pub depth: usize,
    /// Largest layer offered (`L* + 1`, or the flow model's depth when larger).
    pub max: usize,
    /// `|R(L)|` for `L = 0..=L*`.
    pub growth: Rc<Vec<usize>>,
    /// Animation running.
    pub playing: bool,
    /// Theme (for the legend colours).
    pub theme: Theme,
    /// The layer shown and its animation.
    pub on_view: Callback<ViewAction>,
}

/// `L = 0..L*+1` with step buttons, play/pause, the convergence line, the legend and the plot.
#[function_component(LayerControl)]
pub fn layer_control(p: &LayerProps) -> Html {
    let max = p.max;
    let act = |a: ViewAction| on_click(&p.on_view, a);
    let on_range = {
        let d = p.on_view.clone();
        Callback::from(move |e: InputEvent| {
            if let Ok(v) = input_value(&e).parse::<usize>() {
                d.emit(ViewAction::SetLayer(v));
            }
        })
    };
    let status = if p.layer >= p.depth {
        format!("converged at L* = {}", p.depth)
    } else {
        format!("not converged yet: L* = {}", p.depth)
    };
    let pal = Palette::of(p.theme);
    let legend_layers: Vec<usize> =
        if p.depth <= 6 { (0..=p.depth).collect() } else { vec![0, 1, p.depth / 2, p.depth] };
    html! {
        <section class="panel layers" aria-label="Layers">
            <div class="toolrow">
                <button type="button" id="layer-prev" onclick={act(ViewAction::StepLayer(-1))} aria-label="Previous layer" title="Previous layer ([)">{"◀"}</button>
                <button type="button" id="play" onclick={act(ViewAction::TogglePlay)} aria-pressed={p.playing.to_string()} title="Play / pause (P)">
                    { if p.playing { "Pause" } else { "Play" } }</button>
                <button type="button" id="layer-next" onclick={act(ViewAction::StepLayer(1))} aria-label="Next layer" title="Next layer (])">{"▶"}</button>
                <label for="layer" class="layer-label">{"L = "}<output id="layer-value">{ p.layer }</output></label>
                <input id="layer" type="range" min="0" max={max.to_string()} value={p.layer.to_string()} oninput={on_range} />
            </div>
            <p id="convergence" class={classes!("convergence", (p.layer >= p.depth).then_some("done"))} role="status">{ status }</p>
            <div class="legend" aria-label="Legend">
                { swatch(pal.new_cell, format!("new at L = {}", p.layer).into()) }
                { for legend_layers.iter().map(|&l| {
                    swatch(pal.layer_colour(l, p.depth), if l == 0 { "self (0)".into() } else { format!("layer {l}").into() })
                }) }
                { swatch(pal.pending, "in M, not yet reached".into()) }
            </div>
            <GrowthPlot growth={p.growth.clone()} layer={p.layer} />
        </section>
    }
}

/// Growth plot properties.
#[derive(Properties, PartialEq, Clone)]
pub struct GrowthProps {
    /// `|R(L)|` per layer.
    pub growth: Rc<Vec<usize>>,
    /// Current layer.
    pub layer: usize,
}

/// Reached cells against `L`, as a small SVG step plot.
#[function_component(GrowthPlot)]
pub fn growth_plot(p: &GrowthProps) -> Html {
    // `left`: the margin beside the vertical axis, which holds a four-character label
    // (`chart::count`); `pad`: the margin under the horizontal axis.
    let (w, h, left, pad) = (300.0, 74.0, 32.0, 24.0);
    let g = &p.growth;
    let last = g.len().max(1);
    let top_cells = g.iter().copied().max().unwrap_or(1).max(1);
    let top = top_cells as f64;
    let bottom = g.first().copied().unwrap_or(0) as f64 * 0.0;
    let x = |l: usize| left + (w - left - 8.0) * l as f64 / last as f64;
    let y = |v: usize| h - pad + 6.0 - (h - pad - 2.0) * (v as f64 - bottom) / (top - bottom).max(1.0);
    let mut pts: Vec<String> = g.iter().enumerate().map(|(l, &v)| format!("{:.1},{:.1}", x(l), y(v))).collect();
    if let Some(&v) = g.last() {
        pts.push(format!("{:.1},{:.1}", x(last), y(v)));
    }
    let cur = p.layer.min(last);
    let cur_v = g.get(cur.min(g.len().saturating_sub(1))).copied().unwrap_or(0);
    html! {
        <figure class="growth">
            <svg width={w.to_string()} height={h.to_string()} role="img"
                aria-label={format!("Reached cells per layer: {}", g.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", "))}>
                { chart::line("axis", (left, h - pad + 6.0), (w - 4.0, h - pad + 6.0)) }
                { chart::line("axis", (left, 4.0), (left, h - pad + 6.0)) }
                <polyline class="curve" points={pts.join(" ")} />
                <circle class="cursor" cx={chart::at(x(cur))} cy={chart::at(y(cur_v))} r="4" />
                { chart::tick((left, h - 4.0), "middle", "0".into()) }
                { chart::tick((x(last), h - 4.0), "middle", last.to_string().into()) }
                { chart::tick((left - 4.0, 12.0), "end", chart::count(top_cells)) }
                { chart::tick(((w + left) / 2.0, h - 4.0), "middle", "layer L".into()) }
            </svg>
            <figcaption>{ format!("|R({cur})| = {cur_v} reached cells") }</figcaption>
        </figure>
    }
}

/// Statistics properties (all numbers, computed by the caller from the analysis).
#[derive(Properties, PartialEq, Clone)]
pub struct StatsProps {
    /// Rows of (id, label, value).
    pub rows: Rc<Vec<(&'static str, &'static str, String)>>,
}

/// The statistics list.
#[function_component(Stats)]
pub fn stats(p: &StatsProps) -> Html {
    html! {
        <dl class="stats" id="stats">
            { for p.rows.iter().map(|(id, label, value)| html! {
                <div class="stat"><dt>{ *label }</dt><dd id={format!("stat-{id}")}>{ value.clone() }</dd></div>
            }) }
        </dl>
    }
}

/// Block panel properties.
#[derive(Properties, PartialEq, Clone)]
pub struct BlocksProps {
    /// Statistics at the current block size.
    pub stats: Rc<BlockStats>,
    /// Whether the overlay is on.
    pub show: bool,
    /// FlashAttention verdict in words.
    pub flash: String,
    /// FlashMask verdict in words.
    pub flashmask: String,
    /// The overlay and its block size.
    pub on_view: Callback<ViewAction>,
}

/// Block sparsity (FlexAttention-style tiles) and the kernel verdicts.
#[function_component(BlocksPanel)]
pub fn blocks_panel(p: &BlocksProps) -> Html {
    let on_toggle = {
        let d = p.on_view.clone();
        Callback::from(move |e: Event| d.emit(ViewAction::SetShowBlocks(checked(&e))))
    };
    let on_size = {
        let d = p.on_view.clone();
        Callback::from(move |e: Event| {
            if let Ok(v) = input_value(&e).trim().parse::<usize>() {
                d.emit(ViewAction::SetBlockSize(v));
            }
        })
    };
    let s = &p.stats;
    let t = s.total;
    html! {
        <section class="panel blocks" aria-label="Block sparsity">
            <div class="toolrow">
                <label><input id="show-blocks" type="checkbox" checked={p.show} onchange={on_toggle} />{" Block overlay"}</label>
                <label>{"block "}<input id="block-size" type="number" min="1" max={s.n.to_string()}
                    value={s.block_size.to_string()} onchange={on_size} /></label>
            </div>
            <dl class="stats" id="block-stats">
                <div class="stat"><dt>{"full tiles"}</dt><dd id="blocks-full">{ t.full }</dd></div>
                <div class="stat"><dt>{"partial"}</dt><dd id="blocks-partial">{ t.partial }</dd></div>
                <div class="stat"><dt>{"empty"}</dt><dd id="blocks-empty">{ t.empty }</dd></div>
                <div class="stat"><dt>{"sparsity"}</dt><dd id="blocks-sparsity">{ format!("{:.1}%", 100.0 * s.sparsity) }</dd></div>
                <div class="stat"><dt>{"FLOPs vs dense"}</dt><dd id="blocks-flops">{ format!("{:.1}%", 100.0 * s.computed_fraction) }</dd></div>
            </dl>
            <p class="verdict" id="verdict-flash"><strong>{"FlashAttention: "}</strong>{ p.flash.clone() }</p>
            <p class="verdict" id="verdict-flashmask"><strong>{"FlashMask: "}</strong>{ p.flashmask.clone() }</p>
        </section>
    }
}
