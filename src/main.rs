//! hasseflow web app entry point: compiled to wasm by trunk. Natively it only explains itself.

#[cfg(target_arch = "wasm32")]
fn main() {
    yew::Renderer::<hasseflow_app::ui::App>::new().render();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    println!("hasseflow-app is a web app: run `trunk serve` (see README.md); the CLI is `hasseflow`.");
}
