//! hasseflow-app as a library: the plain-Rust parts of the web app (the store and the share-link
//! codec), compiled and tested natively, plus the Yew shell, compiled only for wasm.

pub use hasseflow_core::share;
pub mod state;

#[cfg(target_arch = "wasm32")]
pub mod ui;

/// Mounts the app into the page's body: the whole of the binary's `main` (crates/web).
#[cfg(target_arch = "wasm32")]
pub fn start() {
    yew::Renderer::<ui::App>::new().render();
}
