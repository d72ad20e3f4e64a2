//! The SVG pieces the line charts share (the layer control's growth curve, the Models view's
//! coverage plot): one function per kind of element, so each is compiled once.

use yew::prelude::*;

/// A coordinate as the charts write it (one decimal).
pub fn at(v: f64) -> AttrValue {
    format!("{v:.1}").into()
}

/// A line of `class` from `(x1, y1)` to `(x2, y2)`.
pub fn line(class: &'static str, (x1, y1): (f64, f64), (x2, y2): (f64, f64)) -> Html {
    html! { <line {class} x1={at(x1)} y1={at(y1)} x2={at(x2)} y2={at(y2)} /> }
}

/// A tick label at `(x, y)`, anchored `anchor` (`start`, `middle`, `end`).
pub fn tick((x, y): (f64, f64), anchor: &'static str, text: AttrValue) -> Html {
    html! { <text class="tick" x={at(x)} y={at(y)} text-anchor={anchor}>{ text }</text> }
}
