#!/usr/bin/env bash
# Runs the web app: installs what is missing, then `trunk serve` on http://127.0.0.1:8080.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec trunk serve "$@"
