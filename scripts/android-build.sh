#!/usr/bin/env bash
# Builds `pebench` for Android (arm64-v8a, API 28 and later) into
# build-android/ with the NDK's CMake toolchain. The libraries Debian
# provides elsewhere are built from pinned sources of the same releases
# (PEBENCH_FETCH_DEPS, cmake/FetchDeps.cmake; the configure step clones them),
# the C++ runtime is linked statically (nothing to push beside the binary),
# and volk loads the system's libvulkan.so at run time.
#
#   ANDROID_NDK_HOME=/path/to/android-ndk-r26d scripts/android-build.sh
#   env: ANDROID_NDK_HOME (or ANDROID_NDK, ANDROID_NDK_ROOT), ANDROID_PLATFORM
#        (default android-28), ANDROID_ABI (default arm64-v8a)
# glslc: Debian's, or the NDK's shader-tools/<host>/glslc, on PATH.
# Then scripts/android-run.sh pushes it to a device over adb and runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
ndk=${ANDROID_NDK_HOME:-${ANDROID_NDK:-${ANDROID_NDK_ROOT:-}}}
if [[ -z $ndk || ! -f $ndk/build/cmake/android.toolchain.cmake ]]; then
  echo "android-build: set ANDROID_NDK_HOME to an Android NDK (r23 or later); '${ndk:-unset}' has no build/cmake/android.toolchain.cmake" >&2
  exit 2
fi
platform=${ANDROID_PLATFORM:-android-28}
if [[ ! $platform =~ ^android-([0-9]+)$ ]] || ((BASH_REMATCH[1] < 28)); then
  echo "android-build: ANDROID_PLATFORM '$platform' must be android-28 or later" >&2
  exit 2
fi
if ! command -v glslc >/dev/null; then
  for g in "$ndk"/shader-tools/*/glslc; do [[ -x $g ]] && PATH="$(dirname "$g"):$PATH"; done
fi
cmake -S . -B build-android -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$ndk/build/cmake/android.toolchain.cmake" \
  -DANDROID_ABI="${ANDROID_ABI:-arm64-v8a}" -DANDROID_PLATFORM="$platform" -DANDROID_STL=c++_static \
  -DPEBENCH_BUILD_TESTS=OFF -DPEBENCH_FETCH_DEPS=ON "$@" >/dev/null
cmake --build build-android -j"$(nproc)" --target pebench
echo "android-build: build-android/pebench"
