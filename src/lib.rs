//! The web app's entry: the store (crates/state, plain Rust, tested natively) under its app name
//! `state`, and the Yew shell (`ui`), compiled only for wasm.

pub use hasseflow_core::share;
pub use hasseflow_state as state;

#[cfg(target_arch = "wasm32")]
pub mod ui;

/// Mounts the app into the page's body: the whole of the binary's `main` (crates/web).
#[cfg(target_arch = "wasm32")]
pub fn start() {
    yew::Renderer::<ui::App>::new().render();
}
