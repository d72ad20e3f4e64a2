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
const { default: init } = await import(href('js'));
await init({ module_or_path: href('wasm') });
