//! The web app's links for the Python package's `app_link()`: one codec, the core's
//! `share` module (mask links, Designer links, Models links), encoded and read back here.

use hasseflow_core::format::MAX_N;
use hasseflow_core::share::{self, ModelLink};
use pyo3::prelude::*;

use super::guarded;

/// A Models link's fragment (without `#`) of a `ModelLink` given as JSON (its fields: `gallery`
/// or `config` and `name`, `n`, `documents`, `encoder`, `images`, `layer`).
#[pyfunction]
fn model_fragment(py: Python<'_>, link_json: &str) -> PyResult<String> {
    guarded(py, || {
        let link: ModelLink = serde_json::from_str(link_json).map_err(|e| format!("model link: {e}"))?;
        Ok(share::encode_model(&link))
    })
}

/// What a link's fragment carries, as the app reads it: `("model", its JSON)`, `("design",
/// the family's JSON)` or `("mask", hasseflow JSON of the mask)`; a damaged link is refused
/// with the codec's message.
#[pyfunction]
fn read_fragment(py: Python<'_>, fragment: &str) -> PyResult<(String, String)> {
    guarded(py, || {
        let f = fragment.split_once('#').map_or(fragment, |(_, f)| f);
        if let Some(data) = f.strip_prefix(share::MODEL_PREFIX) {
            let link = share::decode_model(data).map_err(|e| e.to_string())?;
            return Ok(("model".into(), serde_json::to_string(&link).map_err(|e| e.to_string())?));
        }
        if let Some(data) = f.strip_prefix(share::DESIGN_PREFIX) {
            return Ok(("design".into(), share::decode_design(data).map_err(|e| e.to_string())?));
        }
        let shared = share::decode(f, MAX_N).map_err(|e| e.to_string())?;
        let file = hasseflow_core::format::MaskFile {
            labels: shared.labels,
            ..hasseflow_core::format::MaskFile::new(shared.mask)
        };
        Ok(("mask".into(), hasseflow_core::format::write_json(&file, hasseflow_core::format::Encoding::Packed)))
    })
}

/// Adds the link functions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(model_fragment, m)?)?;
    m.add_function(wrap_pyfunction!(read_fragment, m)?)?;
    Ok(())
}
