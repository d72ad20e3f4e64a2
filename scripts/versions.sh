# Every pinned tool version, in one place (sourced by setup.sh and test.sh).
# trunk 0.22 needs a newer rustc than 1.95; wasm-bindgen-cli must equal the wasm-bindgen in
# Cargo.lock (read from there), or trunk tries (and fails) to download one from GitHub.
TRUNK_VERSION=0.21.14
# wasm-opt for release builds (trunk's data-wasm-opt): binaryen's npm package (a wasm build run by
# node, so no download from GitHub), into a tools directory outside the clone. Trunk.toml pins the
# same version (`[tools] wasm_opt = "version_132"`); Debian's binaryen is too old for the
# features Rust 1.95 emits.
BINARYEN_VERSION=132.0.0
HASSEFLOW_TOOLS=${HASSEFLOW_TOOLS:-$HOME/.cache/hasseflow/tools}
# Put the pinned tools on PATH (sourced by setup.sh, test.sh and serve.sh).
export PATH="$HASSEFLOW_TOOLS/binaryen/node_modules/.bin:$PATH"
# The Python tests: NumPy alone (exports), PyTorch (FlexAttention imported and run), Transformers
# (the oracle for config.json layer types and masking_utils). The fixtures under
# crates/core/tests/fixtures record the Transformers version they were made with.
NUMPY_VERSION=2.4.6
TORCH_VERSION=2.15.0
TRANSFORMERS_VERSION=5.24.0
# attn-gym: the mask_mod factories (attn_gym.masks) that the mask_mod corpus imports and runs under
# torch (tests/python/test_mask_mod_wild.py); installed without its dependencies (torch only, pinned above).
ATTN_GYM_VERSION=0.0.17
# The venv lives outside the clone, so a warm machine (and CI's fresh clone on it) reuses it.
HASSEFLOW_VENV=${HASSEFLOW_VENV:-$HOME/.cache/hasseflow/venv}
# The Python package (python/, built from crates/py by maturin; the notebook run by nbclient).
MATURIN_VERSION=1.16.0
NBCLIENT_VERSION=0.11.0
IPYKERNEL_VERSION=7.4.0
