#!/usr/bin/env bash
# Installs what hasseflow needs on a fresh machine, skipping whatever is already there.
# Versions are pinned: trunk 0.22 needs a newer rustc, and wasm-bindgen-cli must equal the
# wasm-bindgen in Cargo.lock or trunk tries (and fails) to download one from GitHub.
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14
WASM_BINDGEN_VERSION=$(grep -A1 '^name = "wasm-bindgen"$' Cargo.lock | sed -n 's/^version = "\(.*\)"/\1/p')
: "${WASM_BINDGEN_VERSION:?cannot read the wasm-bindgen version from Cargo.lock}"

step() { printf '\n==> %s\n' "$*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  step "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
rustup component list --installed | grep -q '^clippy' || rustup component add clippy
rustup component list --installed | grep -q '^rustfmt' || rustup component add rustfmt

if ! trunk --version 2>/dev/null | grep -q "$TRUNK_VERSION"; then
  step "installing trunk $TRUNK_VERSION (about 6 minutes on 2 cores)"
  cargo install trunk --version "$TRUNK_VERSION" --locked
fi

if ! wasm-bindgen --version 2>/dev/null | grep -q "$WASM_BINDGEN_VERSION"; then
  step "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION"
  # No --locked: its lockfile names a webpki-roots release the registry no longer serves.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi

# NumPy for tests/python/test_flex.py (the generated FlexAttention code evaluated without PyTorch).
if ! python3 -c 'import numpy' 2>/dev/null; then
  step "installing numpy for the Python interop tests"
  python3 -m pip install --quiet numpy
fi

# End-to-end tests: Debian's Chromium and playwright-core (never `npx playwright install`, which
# downloads a browser from a host these machines cannot reach).
if [ ! -x /usr/bin/chromium ]; then
  step "installing chromium"
  apt-get update
  apt-get install -y chromium
fi
# ChromeDriver (same Debian build as Chromium) for the wasm-bindgen browser tests.
if [ ! -x /usr/bin/chromedriver ]; then
  step "installing chromium-driver"
  apt-get update
  apt-get install -y chromium-driver
fi
if [ ! -d tests/e2e/node_modules ]; then
  step "installing the e2e test driver (playwright-core)"
  (cd tests/e2e && npm ci)
fi

# The GPU tests (crates/gpu, `flow --backend gpu`) need a Vulkan adapter and fail without one.
# On machines without a GPU, Mesa's lavapipe provides "llvmpipe (Cpu)".
if ! ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1; then
  step "installing lavapipe (mesa-vulkan-drivers) for the GPU tests"
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update
  $SUDO apt-get install -y mesa-vulkan-drivers
fi
