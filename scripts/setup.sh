#!/usr/bin/env bash
# Installs what hasseflow needs on a fresh machine, skipping whatever is already there.
#   setup.sh              everything the tests need
#   setup.sh --serve      only what serving and release builds need (wasm target, trunk,
#                         wasm-bindgen-cli, wasm-opt)
#   setup.sh --serve-dev  the same less wasm-opt, which only release builds run, and, while the
#                         tools compile, the app's first dev build (serve.sh)
# Versions are pinned in scripts/versions.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/versions.sh
SERVE_ONLY=false
WASM_OPT=true
case "${1:-}" in
  --serve) SERVE_ONLY=true ;;
  --serve-dev) SERVE_ONLY=true WASM_OPT=false ;;
esac
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
WASM_BINDGEN_VERSION=$(grep -A1 '^name = "wasm-bindgen"$' Cargo.lock | sed -n 's/^version = "\(.*\)"/\1/p')
: "${WASM_BINDGEN_VERSION:?cannot read the wasm-bindgen version from Cargo.lock}"

step() { printf '\n==> %s\n' "$*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  step "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# trunk and wasm-bindgen-cli (into ~/.cargo/bin), built to install fast rather than run fast: for
# these two commands only, their release profiles (trunk's: fat LTO, one codegen unit) become no
# LTO, 16 codegen units, opt-level 0, and their default features (TLS for downloads, which these
# machines never make; trunk's update check) are off. wasm-bindgen runs on every app build (and
# the browser tests), so its three hot crates are at opt-level 2: 1.7 s on the dev wasm, against
# 3.0 s with them at 1 and 6.7 s with everything at 0. trunk's minifiers (minify-html, whose
# generated entity table alone took 100-195 s to compile, minify-js, lightningcss) and its PNG
# optimiser (oxipng, with libdeflate's C sources) are replaced by the pass-through stand-ins in
# scripts/tool-stubs: trunk calls them only to minify, which hasseflow never asks (tests/docs.rs
# keeps Trunk.toml so).
quick_install() {
  CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_PROFILE_RELEASE_DEBUG=false \
    cargo install --no-default-features "$@"
}
stubs="$PWD/scripts/tool-stubs"
install_trunk() {
  # Its two hashes (every file of every build) at opt-level 2: at 0 they took 1-2 s a build.
  quick_install trunk --version "$TRUNK_VERSION" --locked \
    --config "patch.crates-io.minify-html.path='$stubs/minify-html'" \
    --config "patch.crates-io.minify-js.path='$stubs/minify-js'" \
    --config "patch.crates-io.lightningcss.path='$stubs/lightningcss'" \
    --config "patch.crates-io.oxipng.path='$stubs/oxipng'" \
    --config 'profile.release.package.sha2.opt-level=2' \
    --config 'profile.release.package.seahash.opt-level=2'
}
install_wasm_bindgen() {
  # No --locked: its lockfile names a webpki-roots release the registry no longer serves.
  quick_install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" \
    --config 'profile.release.package.wasmparser.opt-level=2' \
    --config 'profile.release.package.walrus.opt-level=2' \
    --config 'profile.release.package.wasm-bindgen-cli-support.opt-level=2'
}
# One after the other: side by side at the same priority (with the app's first build too) was
# slower, 606 s against about 540 s, as each build alone keeps both cores busy most of the time.
have_trunk() { trunk --version 2>/dev/null | grep -q "$TRUNK_VERSION"; }
have_wasm_bindgen() { wasm-bindgen --version 2>/dev/null | grep -q "$WASM_BINDGEN_VERSION"; }
# serve.sh (--serve-dev) on a machine without the tools: the app's first dev build, the very
# `cargo build` that `trunk serve` starts with (so trunk then finds it fresh), runs beside the
# installs at the lowest priority. It takes only the CPU time they leave idle (build scripts, their
# last crates, linking) and gives it back at once otherwise (docs/BENCHMARKS.md: cold serve.sh).
prebuild=""
if $SERVE_ONLY && ! $WASM_OPT && ! { have_trunk && have_wasm_bindgen; }; then
  step "building the app's dev wasm at low priority beside the installs (log: target/prebuild.log)"
  mkdir -p target
  nice -n 19 cargo build --target wasm32-unknown-unknown --manifest-path crates/web/Cargo.toml \
    --bin hasseflow-app > target/prebuild.log 2>&1 &
  prebuild=$!
  trap '[ -z "$prebuild" ] || kill "$prebuild" 2>/dev/null || true' EXIT
fi
if ! have_trunk; then
  step "installing trunk $TRUNK_VERSION (about 4 minutes on 2 cores)"
  install_trunk
fi
if ! have_wasm_bindgen; then
  step "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (2-3 minutes)"
  install_wasm_bindgen
fi
if [ -n "$prebuild" ]; then
  step "finishing the app's dev build"
  wait "$prebuild" || echo "the early build failed (target/prebuild.log); trunk serve builds it again and shows why"
  prebuild=""
fi

# wasm-opt (binaryen) for `trunk build --release`; node runs it, so node/npm come first.
if $WASM_OPT && ! wasm-opt --version 2>/dev/null | grep -q "version ${BINARYEN_VERSION%%.*} "; then
  if ! command -v npm >/dev/null; then
    step "installing nodejs and npm"
    $SUDO apt-get update
    $SUDO apt-get install -y nodejs npm
  fi
  step "installing binaryen $BINARYEN_VERSION (wasm-opt) into $HASSEFLOW_TOOLS/binaryen"
  mkdir -p "$HASSEFLOW_TOOLS/binaryen"
  npm install --no-save --no-audit --no-fund --prefix "$HASSEFLOW_TOOLS/binaryen" "binaryen@$BINARYEN_VERSION"
fi

if $SERVE_ONLY; then
  exit 0
fi

rustup component list --installed | grep -q '^clippy' || rustup component add clippy
rustup component list --installed | grep -q '^rustfmt' || rustup component add rustfmt

# The Python tests in a venv (Debian's Python refuses pip installs, PEP 668): NumPy, PyTorch
# (CPU use; the default wheel is a few GB, pip's cache keeps it), Transformers and attn-gym.
PY="$HASSEFLOW_VENV/bin/python"
if ! "$PY" -c "import numpy, torch, transformers, sys
sys.exit(not (numpy.__version__ == '$NUMPY_VERSION' and torch.__version__.split('+')[0] == '$TORCH_VERSION'
              and transformers.__version__ == '$TRANSFORMERS_VERSION'))" 2>/dev/null; then
  step "installing numpy $NUMPY_VERSION, torch $TORCH_VERSION, transformers $TRANSFORMERS_VERSION into $HASSEFLOW_VENV (a few GB, minutes)"
  if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then
    $SUDO apt-get update
    $SUDO apt-get install -y python3-venv
  fi
  mkdir -p "$(dirname "$HASSEFLOW_VENV")"
  python3 -m venv "$HASSEFLOW_VENV"
  "$PY" -m pip install --quiet --upgrade pip
  "$PY" -m pip install --quiet "numpy==$NUMPY_VERSION" "torch==$TORCH_VERSION" "transformers==$TRANSFORMERS_VERSION"
fi
# attn-gym's mask factories for the mask_mod corpus: --no-deps, so pip never touches the pinned torch
# (its only declared dependency; attn_gym.masks needs nothing else).
if ! "$PY" -c "import importlib.metadata, sys
sys.exit(importlib.metadata.version('attn-gym') != '$ATTN_GYM_VERSION')" 2>/dev/null; then
  step "installing attn-gym $ATTN_GYM_VERSION into $HASSEFLOW_VENV"
  "$PY" -m pip install --quiet --no-deps "attn-gym==$ATTN_GYM_VERSION"
fi

# The Python package into the venv: maturin builds crates/py and installs python/hasseflow in
# place (editable; a warm build is a no-op for cargo), nbclient and ipykernel run the notebook.
if ! "$PY" -c "import importlib.metadata as m, sys
sys.exit(any(m.version(p) != v for p, v in (('maturin', '$MATURIN_VERSION'), ('nbclient', '$NBCLIENT_VERSION'),
                                           ('ipykernel', '$IPYKERNEL_VERSION'))))" 2>/dev/null; then
  step "installing maturin $MATURIN_VERSION, nbclient $NBCLIENT_VERSION, ipykernel $IPYKERNEL_VERSION into $HASSEFLOW_VENV"
  "$PY" -m pip install --quiet "maturin==$MATURIN_VERSION" "nbclient==$NBCLIENT_VERSION" "ipykernel==$IPYKERNEL_VERSION"
fi
step "building the Python package (maturin develop: crates/py into $HASSEFLOW_VENV)"
(cd python && VIRTUAL_ENV="$HASSEFLOW_VENV" PATH="$HASSEFLOW_VENV/bin:$PATH" maturin develop --locked --quiet)

# End-to-end tests: Debian's Chromium and playwright-core (never `npx playwright install`, which
# downloads a browser from a host these machines cannot reach).
if [ ! -x /usr/bin/chromium ]; then
  step "installing chromium"
  $SUDO apt-get update
  $SUDO apt-get install -y chromium
fi
# ChromeDriver (same Debian build as Chromium) for the wasm-bindgen browser tests.
if [ ! -x /usr/bin/chromedriver ]; then
  step "installing chromium-driver"
  $SUDO apt-get update
  $SUDO apt-get install -y chromium-driver
fi
if [ ! -d tests/e2e/node_modules/playwright-core ] || [ ! -d tests/e2e/node_modules/axe-core ]; then
  step "installing the e2e test driver (playwright-core) and axe-core"
  (cd tests/e2e && npm ci)
fi

# The GPU tests (crates/gpu, `flow --backend gpu`) need a Vulkan adapter and fail without one.
# On machines without a GPU, Mesa's lavapipe provides "llvmpipe (Cpu)".
if ! ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1; then
  step "installing lavapipe (mesa-vulkan-drivers) for the GPU tests"
  $SUDO apt-get update
  $SUDO apt-get install -y mesa-vulkan-drivers
fi
