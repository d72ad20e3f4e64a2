// One Web Worker of the Flow view (static/boot.js's `hasseflowFlow` pool, src/ui/flow/workers.rs).
// It loads the flow module (crates/flow_worker, whose hashed names the pool sends with every task)
// once, then answers each task with one value: on the CPU path a Float32Array, the unperturbed
// pass (`base`) or the influence columns of a range of perturbed copies (`copies`); on the GPU
// path, in the pool's GPU worker, the adapter's JSON (`adapter`) or the whole run (`gpu`).
// A module that fails to load is forgotten, so the next task tries again.
let ready;
const answer = (m, data) => {
  switch (data.kind) {
    case 'base':
      return m.base(data.request);
    case 'copies':
      return m.copies(data.request, data.start, data.end);
    case 'adapter':
      return m.adapter();
    case 'gpu':
      return m.gpu(data.request);
    default:
      throw new Error(`no flow task ${data.kind}`);
  }
};
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
    const out = await answer(m, data);
    self.postMessage({ out }, out instanceof Float32Array ? [out.buffer] : []);
  } catch (e) {
    self.postMessage({ error: String(e?.message ?? e).split('\n')[0] });
  }
};
