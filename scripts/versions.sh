# Every pinned tool version, in one place (sourced by setup.sh and test.sh).
# trunk 0.22 needs a newer rustc than 1.95; wasm-bindgen-cli must equal the wasm-bindgen in
# Cargo.lock (read from there), or trunk tries (and fails) to download one from GitHub.
TRUNK_VERSION=0.21.14
# The Python tests: NumPy alone (exports), PyTorch (FlexAttention imported and run), Transformers
# (the oracle for config.json layer types and masking_utils). The fixtures under
# crates/core/tests/fixtures record the Transformers version they were made with.
NUMPY_VERSION=2.4.6
TORCH_VERSION=2.15.0
TRANSFORMERS_VERSION=5.24.0
# The venv lives outside the clone, so a warm machine (and CI's fresh clone on it) reuses it.
HASSEFLOW_VENV=${HASSEFLOW_VENV:-$HOME/.cache/hasseflow/venv}
