# PEBENCH_FETCH_DEPS: the libraries Debian 12 packages provide, built from
# pinned sources instead, for targets without Debian packages (Android).
# Each is pinned to the release Debian 12 ships, so every target compiles
# against the same APIs as the Debian build:
#   fmt 9.1.0 (libfmt-dev 9.1.0), nlohmann_json 3.11.2 (nlohmann-json3-dev),
#   CLI11 2.1.2 (libcli11-dev), Google Benchmark 1.7.1 (libbenchmark-dev),
#   Vulkan-Headers and volk 1.3.239 (libvulkan-dev, libvulkan-volk-dev).
# FetchContent clones them into the build directory at configure time (the
# only network access of the build). GoogleTest is not fetched: the tests run
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

FetchContent_Declare(fmt GIT_REPOSITORY https://github.com/fmtlib/fmt.git GIT_TAG 9.1.0 GIT_SHALLOW ON)
FetchContent_Declare(nlohmann_json GIT_REPOSITORY https://github.com/nlohmann/json.git GIT_TAG v3.11.2 GIT_SHALLOW ON)
FetchContent_Declare(cli11 GIT_REPOSITORY https://github.com/CLIUtils/CLI11.git GIT_TAG v2.1.2 GIT_SHALLOW ON)
FetchContent_Declare(benchmark GIT_REPOSITORY https://github.com/google/benchmark.git GIT_TAG v1.7.1 GIT_SHALLOW ON)
FetchContent_Declare(vulkan_headers GIT_REPOSITORY https://github.com/KhronosGroup/Vulkan-Headers.git
                     GIT_TAG v1.3.239 GIT_SHALLOW ON)
FetchContent_Declare(volk GIT_REPOSITORY https://github.com/zeux/volk.git GIT_TAG 1.3.239 GIT_SHALLOW ON)
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
