# Cross-compiling for aarch64 Linux with Debian's crossbuild-essential-arm64
# (aarch64-linux-gnu-gcc/g++) against multiarch :arm64 dev packages, which
# install into /usr/lib/aarch64-linux-gnu (scripts/cross-arm64.sh).
# CMake derives CMAKE_LIBRARY_ARCHITECTURE (aarch64-linux-gnu) from the
# compiler, so find_package() picks the arm64 libraries' CMake configs, while
# host programs (glslc) still come from the build machine's PATH.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# Binaries run under qemu-aarch64-static (QEMU_LD_PREFIX=/) on the build machine.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static)
