//! The second wasm module (crates/lazy): what only some visitors use, fetched on first use. Today
//! that is the `mask_mod` reader. `static/boot.js` defines `hasseflowLazy()`, which imports the
//! module named in index.html (content-hashed, like the first download) once and hands back its
//! exports; [`answer`] asks it one `core::interop::wire` request. A failure to load (offline,
//! a missing file) comes back as a sentence, and the next request tries again.

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// What a JS failure says, in one line.
fn why(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "unknown error".into())
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The loaded module's exports (loading it the first time).
async fn module() -> Result<JsValue, String> {
    let loader = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("hasseflowLazy"))
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        .ok_or("the page has no loader (boot.js)")?;
    let promise = loader.call0(&JsValue::NULL).map_err(|e| why(&e))?;
    let promise = promise.dyn_into::<js_sys::Promise>().map_err(|_| "the loader returned no promise")?;
    JsFuture::from(promise).await.map_err(|e| why(&e))
}

/// The reader's answer to `request` (JSON of `core::interop::wire::Request`), or why the module
/// could not be loaded or called.
pub async fn answer(request: String) -> Result<String, String> {
    let exports = module().await?;
    let f = js_sys::Reflect::get(&exports, &JsValue::from_str("answer"))
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        .ok_or("the module has no answer()")?;
    let out = f.call1(&JsValue::NULL, &JsValue::from_str(&request)).map_err(|e| why(&e))?;
    out.as_string().ok_or_else(|| "the module answered no text".into())
}
