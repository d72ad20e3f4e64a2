#!/usr/bin/env bash
# Builds the release bundle for static hosting into dist/ (or the folder given as `--dist DIR`;
# other arguments go to `trunk build`). Installs what it needs if missing: what serving needs
# (setup.sh --serve) and the standard library's source (rustup's rust-src).
#
# The bundle is the size-optimised profile `wasm-release` (Cargo.toml), then `wasm-opt -Oz`
# (index.html). Two settings of the pinned compiler need its unstable flags, enabled for this
# command only (RUSTC_BOOTSTRAP=1); dev builds, `trunk serve` and the tests never use them:
# - the standard library is compiled with the app (`-Z build-std`), at the profile's opt-level
#   and with its `optimize_for_size` feature (smaller sorting and formatting code), instead of
#   linking the prebuilt one, which is optimised for speed;
# - a panic stops the program at once (`-C panic=immediate-abort`), so no panic message or
#   location is compiled in. On wasm32 a panic's message was never shown anyway (no panic hook;
#   the default one writes to a stderr the browser does not have): either way the browser
#   reports a wasm trap.
# - no caller locations (`-Z location-detail=none`): code that records where it was called from
#   for a panic (a `RefCell` borrow, an `unwrap`) keeps no source path. Most of them vanish with
#   the panic machinery, but wgpu's WebGPU backend and js-sys's futures, in the Flow view's worker
#   module, kept their paths (release.test.mjs refuses a module with a source path).
# Together they save about 50 KB gzipped (docs/BENCHMARKS.md, release bundle). Without them,
# `source scripts/versions.sh && trunk build --release` builds the same app, larger.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --serve
source scripts/versions.sh
rustup component list --installed | grep -q '^rust-src' || rustup component add rust-src

export RUSTC_BOOTSTRAP=1
export CARGO_UNSTABLE_BUILD_STD=std,panic_abort
export CARGO_UNSTABLE_BUILD_STD_FEATURES=optimize_for_size
# RUSTFLAGS replaces the target's rustflags of .cargo/config.toml, so they are repeated here
# (tests/architecture.rs checks that every one of them is).
export RUSTFLAGS="-C target-feature=+simd128 -Z unstable-options -C panic=immediate-abort -Z location-detail=none"
exec trunk build --release --locked "$@"
