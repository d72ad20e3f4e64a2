// Loads the wasm app. A separate file because the page's Content-Security-Policy allows no
// inline script (trunk's injected loader is turned off in Trunk.toml).
import init from './hasseflow-app.js';

init({ module_or_path: './hasseflow-app_bg.wasm' });
