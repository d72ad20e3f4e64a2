//! The web app's Designer module, fetched the first time the Designer derives a family (a Derive,
//! an autosaved family or a designer link, when the view opens; static/boot.js's
//! `hasseflowLazy("hasseflow-designer")`, `src/ui/lazy.rs`): the derivation pipeline behind one
//! JSON entry point. The request and the answer are the core's (`derive::wire`), so the app
//! reads the answer into what the linked-in pipeline gives (`Request::derive_here`).

use hasseflow_core::derive;
use wasm_bindgen::prelude::*;

/// Answers a derivation (`core::derive::wire::Request`, as JSON) with `core::derive::wire::answer`:
/// the Designer's view or the `derive --json` text, or the refusal in one line.
#[wasm_bindgen]
pub fn derive(request: &str) -> String {
    derive::wire::answer(request)
}

#[cfg(test)]
mod tests {
    use hasseflow_core::derive::{BuiltinFamily, ButterflyOptions, wire};

    /// The entry point is the core's: butterfly n = 4 merges 16 task nodes into 10, its JSON is
    /// the `derive --json` object, and a damaged request is refused in one line.
    #[test]
    fn answers_views_exports_and_refusals() {
        let request = wire::Request::builtin(BuiltinFamily::Butterfly(ButterflyOptions::new(4)));
        let view = wire::read_view(&super::derive(&request.to_json())).expect("a view");
        assert_eq!((view.report.nodes_before, view.report.nodes_after), (16, 10));
        let json = wire::read_json(&super::derive(&request.for_json().to_json())).expect("the JSON");
        assert!(json.contains("\"sparse_mask\""), "{json}");
        let e = wire::read_view(&super::derive("{")).expect_err("refused");
        assert!(e.starts_with("not a derivation request") && !e.contains('\n'), "{e}");
    }
}
