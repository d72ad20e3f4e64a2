//! hasseflow web app entry point, compiled to wasm by trunk: it only mounts hasseflow-app's
//! `<App>`. It is a crate of its own because the release build's link-time optimisation runs at
//! the opt-level of the crate that links, and this one alone is at 3 (Cargo.toml, profile
//! `wasm-release`). Natively it only explains itself.

#[cfg(target_arch = "wasm32")]
fn main() {
    hasseflow_app::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    println!("hasseflow-app is a web app: run `trunk serve` (see README.md); the CLI is `hasseflow`.");
}
