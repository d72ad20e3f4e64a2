//! The web app's model module, fetched the first time the Models view needs a model (a gallery
//! entry, a `config.json`, a model link: static/boot.js's `hasseflowLazy("hasseflow-models")`,
//! `src/ui/lazy.rs`): the config reader and the model type table behind one JSON entry point.
//! The request and the answer are the core's (`model::wire`), so the app reads the answer into
//! what the linked-in reader returns.

use wasm_bindgen::prelude::*;

/// Answers a model read (`core::model::wire::Request`, as JSON) with `core::model::wire::answer`:
/// the model, or the reader's refusal in one line.
#[wasm_bindgen]
pub fn read(request: &str) -> String {
    hasseflow_core::model::wire::answer(request)
}

#[cfg(test)]
mod tests {
    use hasseflow_core::model::wire;

    /// The module's entry point is the core's: a gallery name comes back as its model.
    #[test]
    fn answers_a_read_with_its_model() {
        let request = wire::Request::gallery("mistral-7b-v0.1").expect("a gallery name");
        let spec = wire::read_answer(&super::read(&request.to_json())).expect("a model");
        assert_eq!((spec.name.as_str(), spec.layers.len()), ("mistral-7b-v0.1", 32));
    }
}
