#!/usr/bin/env bash
# Runs every check: formatting, clippy, all workspace tests (core, render, app store, CLI, GPU
# kernels on a real Vulkan adapter, architecture), browser tests, the Python interop tests (NumPy),
# the Python package against the CLI and its example notebook, a trunk build of the app, the
# end-to-end tests of that build in headless Chromium, and the release bundle (scripts/release.sh)
# with the size target and most end-to-end tests run on it. Installs what is missing first
# (lavapipe included, so the GPU tests run on machines without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/versions.sh
# Mesa warns on every device creation without a runtime dir; give it a private one.
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "${XDG_RUNTIME_DIR}" ]; then
  export XDG_RUNTIME_DIR
  XDG_RUNTIME_DIR=$(mktemp -d)
fi

step() { printf '\n==> %s\n' "$*"; }

step "rustfmt"
cargo fmt --all -- --check
step "clippy (native and wasm)"
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo clippy -p hasseflow-app -p hasseflow-web -p hasseflow-gpu -p hasseflow-flow-worker --target wasm32-unknown-unknown --all-targets --locked -- -D warnings
step "tests"
log=$(mktemp)
cargo test --workspace --locked 2>&1 | tee "$log"
passed=$(grep -Eo '^test result: ok\. [0-9]+ passed' "$log" | awk '{s += $4} END {print s + 0}')
rm -f "$log"
step "browser tests (wasm-bindgen-test in headless Chromium)"
wasm_log=$(mktemp)
cargo test --target wasm32-unknown-unknown -p hasseflow-app --locked 2>&1 | tee "$wasm_log"
wasm_passed=$(grep -Eo '^test result: ok\. [0-9]+ passed' "$wasm_log" | awk '{s += $4} END {print s + 0}')
rm -f "$wasm_log"
[ "$wasm_passed" -gt 0 ] || { echo "the browser tests ran no test"; exit 1; }
passed=$((passed + wasm_passed))
PY="$HASSEFLOW_VENV/bin/python"
cargo build -p hasseflow-cli --locked
# Each Python check ends with "N passed, 0 failed"; a missing library is an install failure, never a skip.
python_check() {
  local log
  log=$(mktemp)
  "$PY" "$@" | tee "$log"
  local n
  n=$(tail -n 1 "$log" | awk '/^[0-9]+ passed, 0 failed$/ {print $1}')
  rm -f "$log"
  : "${n:?$* did not report a clean run}"
  passed=$((passed + n))
}
step "Python interop tests (generated FlexAttention code, .npy, JSON loader, with NumPy)"
python_check tests/python/test_flex.py target/debug/hasseflow
step "PyTorch tests (FlexAttention exports imported and run as scripts; mask_mod import against create_mask)"
python_check tests/python/test_torch.py target/debug/hasseflow
step "mask_mod reader against torch (a corpus of training-code masks; 300 random modules; semantic reproducers; seeded random draws; a 1,000-module differential fuzz)"
python_check tests/python/test_mask_mod_wild.py target/debug/hasseflow
python_check tests/python/test_mask_mod_random.py target/debug/hasseflow
python_check tests/python/test_mask_mod_semantics.py target/debug/hasseflow
python_check tests/python/test_mask_mod_rng.py target/debug/hasseflow
python_check tests/python/test_mask_mod_differential.py target/debug/hasseflow
python_check tests/python/test_mask_mod_edges.py target/debug/hasseflow
python_check tests/python/test_library_masks.py
step "Transformers oracles (layer semantics of masking_utils, layer types of config classes; fixtures re-derived live)"
python_check tests/python/gen_layer_semantics.py --check
python_check tests/python/gen_model_expectations.py --check
step "every Transformers text model type: hasseflow model against the real model (forward-mode reach, float64)"
python_check tests/python/gen_model_types.py --check
python_check tests/python/test_models_live.py
step "the Python package (python/hasseflow) against the CLI and torch; measure on real bugs; the example notebook run by nbclient"
python_check tests/python/test_package.py target/debug/hasseflow
python_check tests/python/test_api.py
python_check tests/python/test_hostile.py
python_check tests/python/test_measure.py
python_check tests/python/test_images_live.py target/debug/hasseflow
python_check tests/python/test_notebook.py
step "app build (trunk)"
trunk build --locked
test -s dist/index.html && test -s dist/boot.js && compgen -G "dist/hasseflow-app-*_bg.wasm" >/dev/null
echo "app built: $(du -h dist/*.wasm | cut -f1) of wasm"
# Runs e2e test files (node --test, one at a time) against the build in $HASSEFLOW_DIST (default
# dist/); adds the passes to $passed (a failure stops the script: pipefail).
e2e_check() {
  local log
  log=$(mktemp)
  (cd tests/e2e && node --test --test-concurrency=1 "$@") 2>&1 | tee "$log"
  local n
  n=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$log")
  rm -f "$log"
  passed=$((passed + n))
}
step "end-to-end tests (headless Chromium)"
e2e_check e2e.test.mjs paste.test.mjs flow.test.mjs models.test.mjs layout.test.mjs a11y.test.mjs assets.test.mjs intro.test.mjs serve.test.mjs readme.test.mjs
step "release bundle (scripts/release.sh into dist-release/) and the end-to-end tests against it"
./scripts/release.sh --dist dist-release
HASSEFLOW_DIST=dist-release e2e_check release.test.mjs assets.test.mjs e2e.test.mjs paste.test.mjs flow.test.mjs models.test.mjs a11y.test.mjs
step "the Python package's pictures, links and the bundled app it serves (hasseflow.app() on dist-release/)"
HASSEFLOW_APP_DIR=dist-release python_check tests/python/test_pictures.py
echo "screenshots and timings: target/e2e-artifacts/"
echo "$passed passed, 0 failed"
