//! The modules fetched on first use: what only some visitors use. `static/boot.js` defines
//! `hasseflowLazy(name)`, which imports the module its `<meta name=…>` in index.html names
//! (content-hashed, like the first download) once and hands back its exports:
//! - `hasseflow-lazy` (crates/lazy): the `mask_mod` reader; [`answer`] asks it one
//!   `core::interop::wire` request for a `mask_mod`;
//! - `hasseflow-formats` (crates/formats): the config reader and the model type table, the `.npy`
//!   and kernel readers and the exports; [`read_model`] asks it one `core::model::wire` request,
//!   [`answer`] one `core::interop::wire` request for a `.npy` array or kernel parameters,
//!   [`export`] one export request;
//! - `hasseflow-designer` (crates/designer): the Designer's pipeline; [`derive`] asks it one
//!   `core::derive::wire` request.
//!
//! A failure to load (offline, a missing file) comes back as a sentence, and the next request
//! tries again.

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::io::{function, why};

/// Calls `export` of the module `<meta name={meta}>` names (loading it the first time) with
/// `request`: its text answer, or why the module could not be loaded or called.
async fn call(meta: &str, export: &str, request: &str) -> Result<String, String> {
    let loader = function(&js_sys::global(), "hasseflowLazy").ok_or("the page has no loader (boot.js)")?;
    let promise = loader.call1(&JsValue::NULL, &JsValue::from_str(meta)).map_err(|e| why(&e))?;
    let promise = promise.dyn_into::<js_sys::Promise>().map_err(|_| "the loader returned no promise")?;
    let exports = JsFuture::from(promise).await.map_err(|e| why(&e))?;
    let f = function(&exports, export).ok_or_else(|| format!("the module has no {export}()"))?;
    let out = f.call1(&JsValue::NULL, &JsValue::from_str(request)).map_err(|e| why(&e))?;
    out.as_string().ok_or_else(|| "the module answered no text".into())
}

/// The reader's answer to `request` (JSON of `core::interop::wire::Request`): the `mask_mod`
/// reader's for a `mask_mod`, the formats module's for a `.npy` array or kernel parameters.
pub async fn answer(request: String, mask_mod: bool) -> Result<String, String> {
    let module = if mask_mod { "hasseflow-lazy" } else { "hasseflow-formats" };
    call(module, "answer", &request).await
}

/// The exporter's answer to `request` (JSON of `core::interop::wire::ExportRequest`).
pub async fn export(request: String) -> Result<String, String> {
    call("hasseflow-formats", "export_mask", &request).await
}

/// The config reader's answer to `request` (JSON of `core::model::wire::Request`).
pub async fn read_model(request: String) -> Result<String, String> {
    call("hasseflow-formats", "read", &request).await
}

/// The Designer pipeline's answer to `request` (JSON of `core::derive::wire::Request`).
pub async fn derive(request: String) -> Result<String, String> {
    call("hasseflow-designer", "derive", &request).await
}
