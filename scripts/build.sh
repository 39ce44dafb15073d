#!/usr/bin/env bash
# Configures and builds pebench (Release) in ./build. Extra arguments go to
# the CMake configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j"$(nproc)"
