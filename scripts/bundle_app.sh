#!/usr/bin/env bash
# Copies the web app's release bundle (scripts/release.sh's output: dist-release/, or the folder
# given as the first argument) into python/hasseflow/app/, where the wheel ships it as package
# data (python/pyproject.toml's `include`) and `hasseflow.app()` serves it. Run it before
# `pip install ./python` or `maturin build --release`; without it the package works, and
# `app_link()` needs HASSEFLOW_APP_URL (a hosted copy) or a source checkout's dist-release/.
set -euo pipefail
cd "$(dirname "$0")/.."
src="${1:-dist-release}"
if [ ! -s "$src/index.html" ]; then
  echo "bundle_app.sh: no release bundle in $src/ (build it: scripts/release.sh --dist $src)" >&2
  exit 1
fi
rm -rf python/hasseflow/app
mkdir -p python/hasseflow/app
cp -R "$src"/. python/hasseflow/app/
echo "python/hasseflow/app/: $(find python/hasseflow/app -type f | wc -l) files, $(du -sh python/hasseflow/app | cut -f1)"
