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

/// A count as an axis label, at most four characters: exact below 10,000, else in thousands or
/// millions, rounded down (262,144 is "262k"): beside the growth curve's axis a six-digit
/// label was cut to its last three digits ("144").
pub fn count(v: usize) -> AttrValue {
    match v {
        0..=9_999 => v.to_string(),
        10_000..=999_999 => format!("{}k", v / 1_000),
        1_000_000..=999_999_999 => format!("{}M", v / 1_000_000),
        _ => format!("{}G", v / 1_000_000_000),
    }
    .into()
}
