//! The second wasm module (crates/lazy): what only some visitors use, fetched on first use. Today
//! that is the `mask_mod` reader. `static/boot.js` defines `hasseflowLazy()`, which imports the
//! module named in index.html (content-hashed, like the first download) once and hands back its
//! exports; [`answer`] asks it one `core::interop::wire` request. A failure to load (offline,
//! a missing file) comes back as a sentence, and the next request tries again.

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::io::{function, why};

/// The loaded module's exports (loading it the first time).
async fn module() -> Result<JsValue, String> {
    let loader = function(&js_sys::global(), "hasseflowLazy").ok_or("the page has no loader (boot.js)")?;
    let promise = loader.call0(&JsValue::NULL).map_err(|e| why(&e))?;
    let promise = promise.dyn_into::<js_sys::Promise>().map_err(|_| "the loader returned no promise")?;
    JsFuture::from(promise).await.map_err(|e| why(&e))
}

/// The reader's answer to `request` (JSON of `core::interop::wire::Request`), or why the module
/// could not be loaded or called.
pub async fn answer(request: String) -> Result<String, String> {
    let exports = module().await?;
    let f = function(&exports, "answer").ok_or("the module has no answer()")?;
    let out = f.call1(&JsValue::NULL, &JsValue::from_str(&request)).map_err(|e| why(&e))?;
    out.as_string().ok_or_else(|| "the module answered no text".into())
}
