#!/usr/bin/env bash
# Runs the web app: installs what serving needs if missing (the wasm target, trunk,
# wasm-bindgen-cli; wasm-opt only for `--release`, the one build that runs it; not the test
# tools), then `trunk serve` on http://127.0.0.1:8080. Other arguments go to `trunk serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
setup=--serve-dev
for arg in "$@"; do [[ $arg == --release* ]] && setup=--serve; done
[ -n "${TRUNK_BUILD_RELEASE:-}" ] && setup=--serve
bash scripts/setup.sh "$setup"
source scripts/versions.sh
exec trunk serve "$@"
