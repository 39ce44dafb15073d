# PEBENCH_FETCH_DEPS: the libraries Debian 12 packages provide, built from
# pinned sources instead, for targets without Debian packages (Android).
# Each is pinned to the release Debian 12 ships, so every target compiles
# against the same APIs as the Debian build:
#   fmt 9.1.0 (libfmt-dev 9.1.0), nlohmann_json 3.11.2 (nlohmann-json3-dev),
#   CLI11 2.1.2 (libcli11-dev), Google Benchmark 1.7.1 (libbenchmark-dev),
#   Vulkan-Headers and volk 1.3.239 (libvulkan-dev, libvulkan-volk-dev).
# FetchContent clones them into the build directory at configure time (the
# only network access of the build; FETCHCONTENT_SOURCE_DIR_<NAME>=DIR uses a
# local copy instead, e.g. FETCHCONTENT_SOURCE_DIR_FMT). GoogleTest is not fetched: the tests run
# on the Debian build.
include(FetchContent)
set(FETCHCONTENT_QUIET ON)

set(FMT_INSTALL OFF CACHE BOOL "" FORCE)
set(JSON_BuildTests OFF CACHE BOOL "" FORCE)
set(JSON_Install OFF CACHE BOOL "" FORCE)
set(CLI11_BUILD_TESTS OFF CACHE BOOL "" FORCE)
set(CLI11_BUILD_EXAMPLES OFF CACHE BOOL "" FORCE)
set(CLI11_BUILD_DOCS OFF CACHE BOOL "" FORCE)
set(BENCHMARK_ENABLE_TESTING OFF CACHE BOOL "" FORCE)
set(BENCHMARK_ENABLE_GTEST_TESTS OFF CACHE BOOL "" FORCE)
set(BENCHMARK_ENABLE_INSTALL OFF CACHE BOOL "" FORCE)
set(BENCHMARK_ENABLE_WERROR OFF CACHE BOOL "" FORCE)
set(BENCHMARK_USE_BUNDLED_GTEST OFF CACHE BOOL "" FORCE)

# Pinned by commit (the release tag in the comment), so a moved tag cannot
# change what is built.
FetchContent_Declare(fmt GIT_REPOSITORY https://github.com/fmtlib/fmt.git
                     GIT_TAG a33701196adfad74917046096bf5a2aa0ab0bb50)  # 9.1.0
FetchContent_Declare(nlohmann_json GIT_REPOSITORY https://github.com/nlohmann/json.git
                     GIT_TAG bc889afb4c5bf1c0d8ee29ef35eaaf4c8bef8a5d)  # v3.11.2
FetchContent_Declare(cli11 GIT_REPOSITORY https://github.com/CLIUtils/CLI11.git
                     GIT_TAG 70f8072f9dd2292fd0b9f9e5f58e279f60483ed3)  # v2.1.2
FetchContent_Declare(benchmark GIT_REPOSITORY https://github.com/google/benchmark.git
                     GIT_TAG d572f4777349d43653b21d6c2fc63020ab326db2)  # v1.7.1
FetchContent_Declare(vulkan_headers GIT_REPOSITORY https://github.com/KhronosGroup/Vulkan-Headers.git
                     GIT_TAG 2bb0a23104ceffd9a28d5b7401f2cee7dae35bb8)  # v1.3.239
FetchContent_Declare(volk GIT_REPOSITORY https://github.com/zeux/volk.git
                     GIT_TAG 9bba0dbb028829ae38f3af0524e9d185c7253f67)  # sdk-1.3.239.0
FetchContent_MakeAvailable(fmt nlohmann_json cli11 benchmark vulkan_headers)
# volk is compiled from its volk.c by the main CMakeLists (as with Debian's
# libvulkan-volk-dev), so only its sources are needed.
FetchContent_GetProperties(volk)
if(NOT volk_POPULATED)
  FetchContent_Populate(volk)
endif()
set(VOLK_SOURCE_DIR ${volk_SOURCE_DIR})
if(NOT TARGET CLI11::CLI11)
  add_library(CLI11::CLI11 ALIAS CLI11)
endif()
