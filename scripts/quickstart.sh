#!/usr/bin/env bash
# README command 1: installs what is missing, builds, and runs the quick
# preset on the default device (the first discrete GPU, else the first
# device), printing a summary table and writing reports/latest.json.
# Extra arguments go to `pebench run` (e.g. --device all).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec build/pebench run --preset quick --out reports/latest.json "$@"
