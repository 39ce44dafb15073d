#!/usr/bin/env bash
# Builds an aarch64 Linux `pebench` into build-arm64/ on a Debian 12 amd64
# machine: Debian's cross compiler (crossbuild-essential-arm64) against the
# multiarch :arm64 dev packages (dpkg --add-architecture arm64). Installs
# what is missing first (apt, once; a no-op when all is there), plus
# qemu-user-static and arm64 lavapipe so the binary can run right here:
#
#   VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.aarch64.json QEMU_LD_PREFIX=/ \
#     qemu-aarch64-static build-arm64/pebench devices
#
# The same multiarch set holds Mesa's Turnip (Adreno) and V3DV (Raspberry Pi)
# ICDs, so build-arm64/pebench also runs on arm64 boards with those GPUs
# (copy it there with its few shared libraries: libfmt, libbenchmark).
#
# Only the `pebench` target is built (no test binary): the tests run on the
# host build; on arm64 CI runs a smoke sweep under qemu (.ci/run).
# Extra arguments go to the CMake configure step.
set -euo pipefail
cd "$(dirname "$0")/.."

HOST_PACKAGES=(crossbuild-essential-arm64 qemu-user-static cmake glslc pkg-config
               nlohmann-json3-dev libcli11-dev libvulkan-volk-dev)
ARM64_PACKAGES=(libvulkan-dev:arm64 libvulkan1:arm64 mesa-vulkan-drivers:arm64
                libfmt-dev:arm64 libbenchmark-dev:arm64)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "cross-arm64: adding the arm64 architecture to dpkg"
  $SUDO dpkg --add-architecture arm64
fi
missing=()
for p in "${HOST_PACKAGES[@]}" "${ARM64_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} > 0)); then
  echo "cross-arm64: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# PEBENCH_SPIRV_FROM (.ci/run sets it): an up-to-date build's generated/spirv
# of this tree, copied instead of running glslc again (cmake/Shaders.cmake).
cmake -S . -B build-arm64 -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchain-aarch64-linux-gnu.cmake" \
  -DPEBENCH_BUILD_TESTS=OFF -DPEBENCH_SPIRV_FROM="${PEBENCH_SPIRV_FROM:-}" "$@" >/dev/null
cmake --build build-arm64 -j"$(nproc)" --target pebench
file build-arm64/pebench 2>/dev/null || true
