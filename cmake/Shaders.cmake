# Compiles every shaders/**/*.comp (not shaders/common/) with glslc, once per
# storage dtype (f32, and f16 with -DSTORAGE_F16=1), into SPIR-V words that a
# generated source file embeds, with a name -> words table
# (runtime/embedded_shaders.h). glslc writes a depfile, so editing a shader or
# any include rebuilds exactly what depends on it. Adding a shader needs no
# edit here: the glob picks it up at the next build; a further build of a
# source with other defines is a "// pebench-build:" line in it (below).
#
# Per build: glslc -g -> <stem>.<dtype>.g.spv; cmake/spirv_strip_debug.py
# drops the debug instructions that -g brings besides the names (the source
# text, file names, line info: about 45% of the words), writes <stem>.<dtype>.spv,
# validates it with spirv-val --target-env vulkan1.1 (a failure fails the
# build) and only then writes <stem>.<dtype>.inc, the C initializer that
# embedded_shaders.cc includes.
set(PEBENCH_SHADER_DTYPES f32 f16)
# -g keeps OpName, so pipelines can name their spec constants (runtime/spirv_reflect.h);
# the rest of what -g adds is stripped (above).
set(PEBENCH_GLSLC_FLAGS --target-env=vulkan1.1 -O -g -Werror -std=450)

# Python 3 runs the filter (scripts/install-deps.sh: python3), once per
# build of a shader (~400 starts in a full build), so the start is kept cheap:
# a pyenv shim first on PATH (~0.3 s a start) is replaced by the interpreter
# it stands for (sys.executable), and -S -E skip site-packages and PYTHON*
# variables (the filter needs only the standard library).
find_package(Python3 3.7 COMPONENTS Interpreter REQUIRED)
if(NOT PEBENCH_SHADER_PYTHON)
  execute_process(COMMAND ${Python3_EXECUTABLE} -c "import sys; print(sys.executable)"
                  OUTPUT_VARIABLE _py OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0 OR NOT EXISTS "${_py}")
    set(_py ${Python3_EXECUTABLE})
  endif()
  set(PEBENCH_SHADER_PYTHON ${_py} CACHE FILEPATH "Python 3 that runs cmake/spirv_strip_debug.py")
endif()
# spirv-val (spirv-tools) checks every stripped module at build time.
# PEBENCH_VALIDATE_SPIRV=OFF skips it where there is none (an NDK-only host).
option(PEBENCH_VALIDATE_SPIRV "Validate every embedded SPIR-V module with spirv-val at build time" ON)
set(PEBENCH_SPIRV_VAL_ARG "")
if(PEBENCH_VALIDATE_SPIRV)
  find_program(SPIRV_VAL spirv-val REQUIRED)
  set(PEBENCH_SPIRV_VAL_ARG ${SPIRV_VAL})
endif()
set(PEBENCH_SPIRV_STRIP ${CMAKE_CURRENT_LIST_DIR}/spirv_strip_debug.py)
# CI builds the same tree four times (tests, arm64, sanitizers; the A/B base
# is another commit). PEBENCH_SPIRV_FROM names an up-to-date build's
# generated/spirv folder of THIS source tree: its .inc files are copied
# instead of running glslc again (~120 s of CPU a build on 2 cores). SPIR-V
# does not depend on the target's architecture or the sanitizers. Left empty
# (the default), every build compiles its own.
set(PEBENCH_SPIRV_FROM "" CACHE PATH "an up-to-date build's generated/spirv folder of this source tree to copy SPIR-V from instead of running glslc")

function(pebench_embed_shaders target shader_dir)
  file(GLOB_RECURSE comps CONFIGURE_DEPENDS ${shader_dir}/*.comp)
  list(FILTER comps EXCLUDE REGEX "/common/")
  set(gen_dir ${CMAKE_CURRENT_BINARY_DIR}/generated)
  file(MAKE_DIRECTORY ${gen_dir}/spirv)
  set(incs "")
  set(arrays "")
  set(entries "")
  set(seen "")
  foreach(comp IN LISTS comps)
    get_filename_component(base_stem ${comp} NAME_WE)
    # Further builds of one source, one table row each: a line
    # "// pebench-build: <suffix> <DEFINE>" builds <stem>_<suffix> with
    # -D<DEFINE>=1 (e.g. attention's packed-binding builds for phones).
    file(STRINGS ${comp} extra_builds REGEX "^// pebench-build: [a-z0-9_]+ [A-Z0-9_]+$")
    set(builds "${base_stem}|")
    foreach(line IN LISTS extra_builds)
      string(REGEX REPLACE "^// pebench-build: ([a-z0-9_]+) ([A-Z0-9_]+)$" "${base_stem}_\\1|-D\\2=1" row "${line}")
      list(APPEND builds "${row}")
    endforeach()
    foreach(build IN LISTS builds)
      string(REPLACE "|" ";" build_fields "${build}")
      list(GET build_fields 0 stem)
      list(LENGTH build_fields nfields)
      set(build_defs "")
      if(nfields GREATER 1)
        list(GET build_fields 1 build_defs)
      endif()
      if(stem IN_LIST seen)
        message(FATAL_ERROR "two shaders are named ${stem}: shader names must be unique")
      endif()
      list(APPEND seen ${stem})
      foreach(dtype IN LISTS PEBENCH_SHADER_DTYPES)
        set(out ${gen_dir}/spirv/${stem}.${dtype})
        set(inc ${out}.inc)
        set(defs ${build_defs})
        if(dtype STREQUAL "f16")
          list(APPEND defs -DSTORAGE_F16=1)
        endif()
        if(PEBENCH_SPIRV_FROM)
          set(from ${PEBENCH_SPIRV_FROM}/${stem}.${dtype}.inc)
          if(NOT EXISTS ${from})
            message(FATAL_ERROR "PEBENCH_SPIRV_FROM=${PEBENCH_SPIRV_FROM}: no ${stem}.${dtype}.inc there; build that folder first, or leave PEBENCH_SPIRV_FROM empty")
          endif()
          add_custom_command(
            OUTPUT ${inc}
            COMMAND ${CMAKE_COMMAND} -E copy ${from} ${inc}
            DEPENDS ${comp} ${from}
            COMMENT "SPIR-V ${stem} (${dtype}) copied from ${PEBENCH_SPIRV_FROM}"
            VERBATIM)
        else()
          add_custom_command(
            OUTPUT ${inc}
            BYPRODUCTS ${out}.g.spv ${out}.spv
            COMMAND ${GLSLC} ${PEBENCH_GLSLC_FLAGS} -I${shader_dir} ${defs}
                    -MD -MF ${inc}.d -MT ${inc} -o ${out}.g.spv ${comp}
            COMMAND ${PEBENCH_SHADER_PYTHON} -S -E ${PEBENCH_SPIRV_STRIP} ${out}.g.spv ${out}.spv ${inc}
                    ${PEBENCH_SPIRV_VAL_ARG}
            DEPENDS ${comp} ${PEBENCH_SPIRV_STRIP}
            DEPFILE ${inc}.d
            COMMENT "glslc ${stem}.comp (${dtype})"
            VERBATIM)
        endif()
        list(APPEND incs ${inc})
        string(MAKE_C_IDENTIFIER "k_${stem}_${dtype}" var)
        string(APPEND arrays "const uint32_t ${var}[] =\n#include \"spirv/${stem}.${dtype}.inc\"\n;\n")
        string(APPEND entries "    {\"${stem}\", \"${dtype}\", ${var}, sizeof(${var}) / sizeof(uint32_t)},\n")
      endforeach()
    endforeach()
  endforeach()

  set(cc ${gen_dir}/embedded_shaders.cc)
  set(content "// Generated by cmake/Shaders.cmake; do not edit.
#include \"runtime/embedded_shaders.h\"
namespace pebench {
namespace {
${arrays}
const EmbeddedShader kShaders[] = {
${entries}};
}  // namespace
const EmbeddedShader* embedded_shaders_begin() { return kShaders; }
const EmbeddedShader* embedded_shaders_end() { return kShaders + sizeof(kShaders) / sizeof(kShaders[0]); }
}  // namespace pebench
")
  if(EXISTS ${cc})
    file(READ ${cc} old)
  endif()
  if(NOT old STREQUAL content)
    file(WRITE ${cc} "${content}")
  endif()
  set_source_files_properties(${incs} PROPERTIES HEADER_FILE_ONLY ON GENERATED ON)
  add_library(${target} STATIC ${cc} ${incs})
  target_include_directories(${target} PUBLIC ${gen_dir} ${CMAKE_CURRENT_SOURCE_DIR}/src)
endfunction()
