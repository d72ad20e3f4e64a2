#!/usr/bin/env bash
# Runs the web app: installs what serving needs if missing (the wasm target, trunk,
# wasm-bindgen-cli, wasm-opt for `--release`; not the test tools), then `trunk serve` on http://127.0.0.1:8080.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --serve
source scripts/versions.sh
exec trunk serve "$@"
