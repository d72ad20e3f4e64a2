//! The web app's formats module, fetched the first time the Models view needs a model (a gallery
//! entry, a `config.json`, a model link), a `.npy` array or kernel parameters are imported, or the
//! mask is exported (static/boot.js's `hasseflowLazy("hasseflow-formats")`, `src/ui/lazy.rs`):
//! the readers and writers of other tools' formats, behind three JSON entry points. The requests
//! and answers are the core's (`model::wire`, `interop::wire`), so the app reads each answer into
//! what the linked-in reader or exporter returns.

use hasseflow_core::{interop, model};
use wasm_bindgen::prelude::*;

/// Answers a model read (`core::model::wire::Request`, as JSON) with `core::model::wire::answer`:
/// the model, or the config reader's refusal in one line.
#[wasm_bindgen]
pub fn read(request: &str) -> String {
    model::wire::answer(request)
}

/// Answers an import of a `.npy` array or kernel parameters (`core::interop::wire::Request`, as
/// JSON) with `core::interop::wire::answer_formats`: the mask, or the refusal.
#[wasm_bindgen]
pub fn answer(request: &str) -> String {
    interop::wire::answer_formats(request)
}

/// Answers an export request (`core::interop::wire::ExportRequest`, as JSON) with
/// `core::interop::wire::export_answer`: the export's bytes, or why not.
#[wasm_bindgen]
pub fn export_mask(request: &str) -> String {
    interop::wire::export_answer(request)
}

#[cfg(test)]
mod tests {
    use hasseflow_core::interop::{ExportKind, SizeHint, Source};
    use hasseflow_core::{BitMatrix, format::MaskFile, interop, model::wire};

    /// The entry points are the core's: a gallery name comes back as its model, a `.npy` array
    /// as its mask, a causal mask as its FlexAttention code.
    #[test]
    fn answers_reads_imports_and_exports() {
        let request = wire::Request::gallery("mistral-7b-v0.1").expect("a gallery name");
        let spec = wire::read_answer(&super::read(&request.to_json())).expect("a model");
        assert_eq!((spec.name.as_str(), spec.layers.len()), ("mistral-7b-v0.1", 32));
        let m = BitMatrix::from_fn(4, |q, k| k <= q);
        let npy = interop::write_npy(&m);
        let request = interop::wire::Request::of_bytes(&npy, SizeHint::None, 0, 0);
        let (file, source) = interop::wire::read_answer(&super::answer(&request.to_json())).expect("a mask");
        assert_eq!((file.mask, source), (m.clone(), Source::Npy));
        let request = interop::wire::ExportRequest::new(&MaskFile::new(m), ExportKind::Flex, 128);
        let code = interop::wire::read_export(&super::export_mask(&request.to_json())).expect("the code");
        assert!(String::from_utf8(code).expect("text").contains("def mask_mod"));
        // A mask_mod is not this module's to read.
        let request = interop::wire::Request::new("def m(b, h, q, k):\n    return k <= q\n", SizeHint::Given(3), 0, 0);
        assert!(interop::wire::read_answer(&super::answer(&request.to_json())).is_err());
    }
}
