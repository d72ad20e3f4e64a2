//! Browser IO for the shell: clock, localStorage, URL fragment, downloads, clipboard, file
//! reading. Every failure comes back as a sentence for the message bar; nothing here panics.

use wasm_bindgen::{JsCast, JsValue};

/// Milliseconds from `performance.now()` (0 where there is no performance object).
pub fn now() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}

/// localStorage key of the autosave.
pub const AUTOSAVE_KEY: &str = "hasseflow.autosave.v1";

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// Reads the autosave.
pub fn load_autosave() -> Option<String> {
    storage()?.get_item(AUTOSAVE_KEY).ok().flatten()
}

/// Writes the autosave; a full or missing storage is reported.
pub fn save_autosave(json: &str) -> Result<(), String> {
    let s = storage().ok_or("local storage is not available; autosave is off")?;
    s.set_item(AUTOSAVE_KEY, json).map_err(|_| "local storage is full; autosave failed".to_string())
}

/// localStorage key of the designer's last family.
pub const DESIGN_KEY: &str = "hasseflow.design.v1";

/// Reads the designer's saved family.
pub fn load_design() -> Option<String> {
    storage()?.get_item(DESIGN_KEY).ok().flatten()
}

/// Saves the designer's family; a full or missing storage is reported.
pub fn save_design(json: &str) -> Result<(), String> {
    let s = storage().ok_or("local storage is not available; the design is not saved")?;
    s.set_item(DESIGN_KEY, json).map_err(|_| "local storage is full; the design was not saved".to_string())
}

/// localStorage key set once the first-visit introduction is closed.
pub const INTRO_KEY: &str = "hasseflow.intro-closed.v1";

/// Whether the introduction was closed in this browser before.
pub fn intro_closed() -> bool {
    storage().and_then(|s| s.get_item(INTRO_KEY).ok().flatten()).is_some()
}

/// Remembers (or forgets) that the introduction was closed; without storage it simply shows again.
pub fn set_intro_closed(closed: bool) {
    if let Some(s) = storage() {
        let _ = if closed { s.set_item(INTRO_KEY, "1") } else { s.remove_item(INTRO_KEY) };
    }
}

/// The URL fragment without `#`.
pub fn fragment() -> String {
    web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .map(|h| h.trim_start_matches('#').to_string())
        .unwrap_or_default()
}

/// The page URL with `fragment`, e.g. for a share link.
pub fn url_with_fragment(fragment: &str) -> String {
    let base = web_sys::window()
        .and_then(|w| w.location().href().ok())
        .map(|h| h.split('#').next().unwrap_or_default().to_string())
        .unwrap_or_default();
    format!("{base}#{fragment}")
}

/// What a JS failure (a thrown `Error`, a string, anything) says, in one line.
pub fn why(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "unknown error".into())
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The function `target[name]`, when it is one (an entry point of a module or of `static/boot.js`).
pub fn function(target: &JsValue, name: &str) -> Option<js_sys::Function> {
    js_sys::Reflect::get(target, &JsValue::from_str(name)).ok().and_then(|f| f.dyn_into::<js_sys::Function>().ok())
}

fn js_err(e: JsValue) -> String {
    e.as_string()
        .or_else(|| js_sys::JSON::stringify(&e).ok().and_then(|s| s.as_string()))
        .unwrap_or_else(|| "unknown error".into())
}

/// Offers `blob` as a download named `name`.
pub fn download_blob(blob: &web_sys::Blob, name: &str) -> Result<(), String> {
    let url = web_sys::Url::create_object_url_with_blob(blob).map_err(js_err)?;
    let doc = web_sys::window().and_then(|w| w.document()).ok_or("no document")?;
    let a: web_sys::HtmlAnchorElement = doc.create_element("a").map_err(js_err)?.dyn_into().map_err(|_| "no anchor")?;
    a.set_href(&url);
    a.set_download(name);
    a.click();
    let _ = web_sys::Url::revoke_object_url(&url);
    Ok(())
}

/// Offers `text` as a download.
pub fn download_text(text: &str, name: &str, mime: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts).map_err(js_err)?;
    download_blob(&blob, name)
}

/// Offers `bytes` as a download (binary exports such as `.npy`).
pub fn download_bytes(bytes: &[u8], name: &str, mime: &str) -> Result<(), String> {
    let array = js_sys::Uint8Array::from(bytes);
    let parts = js_sys::Array::of1(&array.buffer());
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_buffer_source_sequence_and_options(&parts, &opts).map_err(js_err)?;
    download_blob(&blob, name)
}

/// Copies `text` to the clipboard.
pub async fn copy_text(text: String) -> Result<(), String> {
    let w = web_sys::window().ok_or("no window")?;
    let promise = w.navigator().clipboard().write_text(&text);
    wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .map(|_| ())
        .map_err(|e| format!("the clipboard refused ({})", js_err(e)))
}

/// Reads a dropped or picked file.
pub async fn read_file(file: web_sys::File) -> Result<Vec<u8>, String> {
    let buf = wasm_bindgen_futures::JsFuture::from(file.array_buffer()).await.map_err(js_err)?;
    Ok(js_sys::Uint8Array::new(&buf).to_vec())
}

/// Saves a canvas as a PNG download.
pub fn download_canvas_png(canvas: &web_sys::HtmlCanvasElement, name: &str) -> Result<(), String> {
    let name = name.to_string();
    let cb = wasm_bindgen::closure::Closure::once_into_js(move |blob: Option<web_sys::Blob>| {
        if let Some(b) = blob {
            let _ = download_blob(&b, &name);
        }
    });
    canvas.to_blob(cb.unchecked_ref()).map_err(js_err)
}

/// Removes the fragment from the address bar without reloading or firing `hashchange`.
pub fn clear_fragment() {
    if let Some(w) = web_sys::window()
        && let Ok(h) = w.history()
    {
        let loc = w.location();
        let url = format!("{}{}", loc.pathname().unwrap_or_default(), loc.search().unwrap_or_default());
        let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(&url));
    }
}

/// The value of `name` in the page's query string (`?layout=layered`), for diagnostics.
pub fn query_param(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    search.trim_start_matches('?').split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == name).then(|| v.to_string())
    })
}
