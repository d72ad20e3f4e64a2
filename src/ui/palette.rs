//! The app's colours are the render crate's ([`hasseflow_render::palette`]: the pictures of the
//! Python package use the same ones); here only the legend swatch, which is markup.

pub use hasseflow_render::palette::{Palette, Rgb, Theme, css, viridis};

/// A legend entry: a square of `colour` and what it means (the legends of the layer control, the
/// Flow maps and the heatmap).
pub fn swatch(colour: Rgb, meaning: yew::AttrValue) -> yew::Html {
    yew::html! {
        <span class="swatch-item"><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill={css(colour)} /></svg>{ meaning }</span>
    }
}
