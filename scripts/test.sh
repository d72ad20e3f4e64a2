#!/usr/bin/env bash
# Runs every check: formatting, clippy, all workspace tests (core, CLI, GPU kernels on a real
# Vulkan adapter, architecture), and a trunk build of the app. Installs what is missing first
# (lavapipe included, so the GPU tests run on machines without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
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
cargo clippy -p hasseflow-app --target wasm32-unknown-unknown --locked -- -D warnings
step "tests"
log=$(mktemp)
cargo test --workspace --locked 2>&1 | tee "$log"
passed=$(grep -Eo '^test result: ok\. [0-9]+ passed' "$log" | awk '{s += $4} END {print s + 0}')
rm -f "$log"
step "app build (trunk)"
trunk build --locked
test -s dist/index.html && test -s dist/boot.js && test -s dist/hasseflow-app_bg.wasm
echo "app built: $(du -h dist/*.wasm | cut -f1) of wasm"
echo "$passed passed, 0 failed"
