// Loads the wasm app. A separate file because the page's Content-Security-Policy allows no
// inline script. Trunk names the JS glue and the wasm after a hash of their contents
// (`filehash` in Trunk.toml) and writes those names into index.html as preload links
// (`pattern_preload`); this reads them there, so a browser never pairs a cached old wasm with
// a new page: a new build has new names. This file itself never changes between builds.
const href = (kind) => {
  const link = document.querySelector(`link[data-hasseflow="${kind}"]`);
  if (!link) throw new Error(`index.html has no ${kind} preload link (Trunk.toml pattern_preload)`);
  return link.href;
};

// The modules fetched on first use (src/ui/lazy.rs), never with the page, each by the name of
// its <meta>: hasseflow-lazy (crates/lazy: the mask_mod reader), hasseflow-formats
// (crates/formats: the config reader, the model type table, the .npy and kernel readers and the
// exports) and hasseflow-designer (crates/designer: the Designer's pipeline). scripts/hash_lazy.sh names each after its contents and writes the names into a
// <meta>. One load per module is shared by every caller; a failed one (offline, a missing file)
// is forgotten, so the next call tries again.
const lazy = new Map();
globalThis.hasseflowLazy = (name = 'hasseflow-lazy') => {
  if (!lazy.has(name)) {
    lazy.set(name, (async () => {
      const meta = document.querySelector(`meta[name="${name}"]`);
      if (!meta) throw new Error(`index.html names no lazily loaded module ${name} (scripts/hash_lazy.sh)`);
      const url = (part) => new URL(meta.dataset[part], document.baseURI).href;
      const module = await import(url('js'));
      await module.default({ module_or_path: url('wasm') });
      return module;
    })().catch((e) => {
      lazy.delete(name);
      throw e;
    }));
  }
  return lazy.get(name);
};

// The Flow view's CPU path on every core (src/ui/flow/workers.rs): a pool of module Web Workers
// (static/flow-worker.js), each running the third module (crates/flow_worker: the flow model
// alone), named after its contents by scripts/hash_lazy.sh like the second. Workers start on the
// first task, at most `size()` of them; tasks wait in a queue, and `cancel(run)` drops that run's
// tasks no worker has started (a started task runs to its end; its answer is ignored). A worker that fails
// to start fails its task (the view says why, with Retry) and leaves the pool; the next task
// starts a new one.
const pool = { workers: [], queue: [] };
const flowModule = () => {
  const meta = document.querySelector('meta[name="hasseflow-flow"]');
  if (!meta) throw new Error('index.html names no flow worker module (scripts/hash_lazy.sh)');
  const url = (name) => new URL(meta.dataset[name], document.baseURI).href;
  return { js: url('js'), wasm: url('wasm') };
};
// `?workers=N` sets the pool's size (1 to 16), for measuring; else one worker a core, at most 8.
const poolSize = () => {
  const asked = new URLSearchParams(location.search).get('workers');
  if (asked !== null && /^\d+$/.test(asked)) return Math.max(1, Math.min(Number(asked), 16));
  return Math.max(1, Math.min(navigator.hardwareConcurrency || 1, 8));
};
const settle = (w, fn) => {
  const task = w.task;
  w.task = null;
  if (task) fn(task);
};
const spawn = () => {
  const w = { worker: new Worker(new URL('./flow-worker.js', document.baseURI), { type: 'module' }), task: null };
  w.worker.onmessage = ({ data }) => {
    settle(w, (t) => (data.error === undefined ? t.resolve(data.out) : t.reject(new Error(data.error))));
    pump();
  };
  w.worker.onerror = (e) => {
    e.preventDefault();
    pool.workers = pool.workers.filter((x) => x !== w);
    w.worker.terminate();
    settle(w, (t) => t.reject(new Error(`a flow worker failed: ${e.message || 'it did not start'}`)));
    pump();
  };
  pool.workers.push(w);
  return w;
};
const pump = () => {
  while (pool.queue.length) {
    const w = pool.workers.find((x) => !x.task) ?? (pool.workers.length < poolSize() ? spawn() : null);
    if (!w) return;
    const task = pool.queue.shift();
    w.task = task;
    w.worker.postMessage(task.message);
  }
};
let runs = 0;
globalThis.hasseflowFlow = {
  size: poolSize,
  // A new run's number: its tasks are queued under it, and cancelled by it alone.
  begin: () => ++runs,
  run(id, kind, request, start, end) {
    const answer = new Promise((resolve, reject) => {
      const message = { ...flowModule(), kind, request, start, end };
      pool.queue.push({ id, message, resolve, reject });
      pump();
    });
    // A caller that stopped waiting (a cancelled run) leaves no unhandled rejection.
    answer.catch(() => {});
    return answer;
  },
  cancel(id) {
    const [dropped, kept] = [pool.queue.filter((t) => t.id === id), pool.queue.filter((t) => t.id !== id)];
    pool.queue = kept;
    for (const t of dropped) t.reject(new Error('cancelled'));
  },
  // The GPU path (src/ui/flow.rs): one more worker of the same module, kept for the page, opens
  // the WebGPU device on its first task and keeps it; its tasks (`adapter`, `gpu`) run one after
  // another. A worker that fails to start fails its task and is replaced on the next.
  gpu(kind, request) {
    const task = gpuChain.then(
      () =>
        new Promise((resolve, reject) => {
          gpuWorker ??= new Worker(new URL('./flow-worker.js', document.baseURI), { type: 'module' });
          const w = gpuWorker;
          w.onmessage = ({ data }) => (data.error === undefined ? resolve(data.out) : reject(new Error(data.error)));
          w.onerror = (e) => {
            e.preventDefault();
            w.terminate();
            if (gpuWorker === w) gpuWorker = null;
            reject(new Error(`the GPU worker failed: ${e.message || 'it did not start'}`));
          };
          w.postMessage({ ...flowModule(), kind, request });
        }),
    );
    gpuChain = task.catch(() => {});
    return task;
  },
};
let gpuWorker = null;
let gpuChain = Promise.resolve();

const { default: init } = await import(href('js'));
await init({ module_or_path: href('wasm') });
