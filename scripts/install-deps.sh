#!/usr/bin/env bash
# Installs the Debian 12 packages pebench needs, and only those missing:
# running it again is a no-op (no apt-get at all when everything is there).
set -euo pipefail

PACKAGES=(
  build-essential cmake git pkg-config
  libvulkan-dev          # Vulkan headers (+ libvulkan1, the loader)
  libvulkan-volk-dev     # volk.h/volk.c, compiled into pebench
  glslc spirv-tools      # GLSL -> SPIR-V at build time, spirv-val on every embedded module
  libbenchmark-dev       # Google Benchmark: timing loop and --benchmark_* flags
  libgtest-dev           # GoogleTest
  nlohmann-json3-dev     # reports and dumps metadata
  libfmt-dev             # formatting
  libcli11-dev           # command line
  libsqlite3-dev libpq-dev libssl-dev  # the results database (pebench db): SQLite file by default, PostgreSQL client by URL; OpenSSL's SHA-256 names each report
  postgresql             # a throwaway PostgreSQL server the results-database tests start (tests/pg_server.sh)
  mesa-vulkan-drivers    # lavapipe, the software Vulkan device
  vulkan-validationlayers vulkan-tools
  python3 python3-numpy  # python3: the SPIR-V debug-info filter (build, cmake/spirv_strip_debug.py); NumPy: the independent check of dumps (tests)
  python3-jsonschema     # the report schema check (tests)
  libbenchmark-tools python3-scipy  # Google Benchmark's compare.py, which a test runs against `pebench compare`
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
