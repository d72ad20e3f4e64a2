// One Web Worker of the Flow view's CPU path (static/boot.js's `hasseflowFlow` pool,
// src/ui/flow/workers.rs). It loads the flow module (crates/flow_worker, whose hashed names the
// pool sends with every task) once, then answers each task with one Float32Array: the
// unperturbed pass (`base`) or the influence columns of a range of perturbed copies (`copies`).
// A module that fails to load is forgotten, so the next task tries again.
let ready;
self.onmessage = async ({ data }) => {
  try {
    ready ??= import(data.js).then(async (m) => {
      await m.default({ module_or_path: data.wasm });
      return m;
    });
    const m = await ready.catch((e) => {
      ready = undefined;
      throw e;
    });
    const out = data.kind === 'base' ? m.base(data.request) : m.copies(data.request, data.start, data.end);
    self.postMessage({ out }, [out.buffer]);
  } catch (e) {
    self.postMessage({ error: String(e?.message ?? e).split('\n')[0] });
  }
};
