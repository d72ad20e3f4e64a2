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

// The second module (crates/lazy: the mask_mod reader), fetched the first time the app asks
// for it (src/ui/lazy.rs), never with the page. scripts/hash_lazy.sh names it after its
// contents and writes the names into a <meta>. One load is shared by every caller; a failed
// one (offline, a missing file) is forgotten, so the next call tries again.
let lazy;
globalThis.hasseflowLazy = () => {
  lazy ??= (async () => {
    const meta = document.querySelector('meta[name="hasseflow-lazy"]');
    if (!meta) throw new Error('index.html names no lazily loaded module (scripts/hash_lazy.sh)');
    const url = (name) => new URL(meta.dataset[name], document.baseURI).href;
    const module = await import(url('js'));
    await module.default({ module_or_path: url('wasm') });
    return module;
  })().catch((e) => {
    lazy = undefined;
    throw e;
  });
  return lazy;
};

const { default: init } = await import(href('js'));
await init({ module_or_path: href('wasm') });
