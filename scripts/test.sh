#!/usr/bin/env bash
# README command 2: installs what is missing, builds, and runs the tests
# (CTest over GoogleTest, plus the NumPy dump check). Tests run on the
# Vulkan device $PEBENCH_TEST_DEVICE (default 0); with no GPU that is
# lavapipe. Any Vulkan validation-layer error fails a test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)"
