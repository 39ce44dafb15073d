# Generates build_info.cc with the version, git commit, build type and compiler,
# so every report says exactly which build produced it. The commit is re-read
# at every build (a custom target), not only at configure time.
set(PEBENCH_BUILDINFO_CC ${CMAKE_CURRENT_BINARY_DIR}/generated/build_info.cc)
add_custom_target(pebench_buildinfo_gen
  COMMAND ${CMAKE_COMMAND}
    -DSRC=${CMAKE_CURRENT_SOURCE_DIR}
    -DOUT=${PEBENCH_BUILDINFO_CC}
    -DVERSION=${PROJECT_VERSION}
    -DBUILD_TYPE=${CMAKE_BUILD_TYPE}
    "-DCOMPILER=${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}"
    -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/WriteBuildInfo.cmake
  BYPRODUCTS ${PEBENCH_BUILDINFO_CC}
  COMMENT "Recording build info")
add_library(pebench_buildinfo STATIC ${PEBENCH_BUILDINFO_CC})
add_dependencies(pebench_buildinfo pebench_buildinfo_gen)
target_include_directories(pebench_buildinfo PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/src)
