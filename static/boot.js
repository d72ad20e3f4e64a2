// Loads the wasm app (trunk's inline loader is disabled so the CSP can forbid inline scripts).
import init from "./hasseflow-app.js";

init({ module_or_path: new URL("./hasseflow-app_bg.wasm", import.meta.url) }).catch((err) => {
  const msg = document.createElement("p");
  msg.setAttribute("role", "alert");
  msg.textContent = "hasseflow could not start: " + err;
  document.body.append(msg);
});
