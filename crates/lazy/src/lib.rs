//! The web app's second wasm module, fetched the first time a `mask_mod` is pasted, dropped or
//! opened (static/boot.js's `hasseflowLazy`, `src/ui/lazy.rs`): the mask_mod interpreter behind
//! one JSON entry point. The request and the answer are the core's (`interop::wire`), so the app
//! reads the answer into what the linked-in importer returns.

use wasm_bindgen::prelude::*;

/// Answers a `mask_mod` import request (`core::interop::wire::Request`, as JSON) with
/// `core::interop::wire::answer`: the mask and the import's report, or the refusal with its place.
#[wasm_bindgen]
pub fn answer(request: &str) -> String {
    hasseflow_core::interop::wire::answer(request)
}

#[cfg(test)]
mod tests {
    use hasseflow_core::interop::{SizeHint, Source, wire};

    /// The module's entry point is the core's: a request comes back as the mask it asks for.
    #[test]
    fn answers_a_request_with_its_mask() {
        let request = wire::Request::new("def m(b, h, q, k):\n    return k <= q\n", SizeHint::Given(3), 0, 0);
        let (file, source) = wire::read_answer(&super::answer(&request.to_json())).expect("a mask");
        assert_eq!(file.mask.to_row_strings(), ["1..", "11.", "111"]);
        assert!(matches!(source, Source::MaskMod { n: 3, .. }));
    }
}
