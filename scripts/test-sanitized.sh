#!/usr/bin/env bash
# The sanitizer pass of CI: an ASan + UBSan build in ./build-asan
# (-DPEBENCH_SANITIZE=ON: address, undefined and float-cast-overflow, any
# finding fatal), then every test labelled `host` and a short GPU sweep on
# lavapipe under it. The host tests run with no Vulkan driver at all, so a
# suite wrongly labelled host (it opens a device) fails here.
set -euo pipefail
cd "$(dirname "$0")/.."
lvp_icd=${PEBENCH_LVP_ICD:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
jobs=$(nproc)

# PEBENCH_SPIRV_FROM (.ci/run sets it): SPIR-V copied from an up-to-date
# build of this tree instead of compiled again (cmake/Shaders.cmake).
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release -DPEBENCH_SANITIZE=ON \
  -DPEBENCH_SPIRV_FROM="${PEBENCH_SPIRV_FROM:-}" >/dev/null
cmake --build build-asan -j"$jobs"

export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The property test and the report fuzz run in full (2,000 invocations, 300
# reports) in the plain test step; here a quarter and a half of that: in
# full, instrumented, both ran past ctest's 600 s on a fresh clone at load
# average 4 to 6 (2026-11-28).
export PEBENCH_PROPERTY_RUNS=${PEBENCH_PROPERTY_RUNS:-500} PEBENCH_FUZZ_CASES=${PEBENCH_FUZZ_CASES:-150}
(cd build-asan && VK_DRIVER_FILES=/nonexistent ctest -L host -j"$jobs" --output-on-failure)

# Every variant once per dtype at a tiny shape: planning, input generation,
# the float64 references and validation all run instrumented. lavapipe leaks
# 128 bytes when it is unloaded at exit, and LeakSanitizer can neither
# symbolize nor suppress a leak whose library is gone; preloaded, it is never
# unloaded and the leak is not reported. Preloading puts it ahead of libasan,
# which ASan refuses unless verify_asan_link_order=0.
lvp=$(sed -n 's/.*"library_path": *"\([^"]*\)".*/\1/p' "$lvp_icd")
VK_DRIVER_FILES=$lvp_icd LD_PRELOAD=$lvp ASAN_OPTIONS=verify_asan_link_order=0 \
  build-asan/pebench run --variant '*' --seq 16 --heads 2 --dim 16 --dtype f32,f16 \
  --benchmark_min_time=0.01 --timeout 60 --quiet --out build-asan/sanitized-sweep.json
