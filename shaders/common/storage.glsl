// Storage dtype of a shader build: every shader is compiled twice by
// cmake/Shaders.cmake, once as is (f32) and once with STORAGE_F16 defined.
// Kernels load STORAGE_T, compute in float and store STORAGE_T.
#ifndef PEBENCH_STORAGE_GLSL
#define PEBENCH_STORAGE_GLSL

#ifdef STORAGE_F16
#extension GL_EXT_shader_16bit_storage : require
#define STORAGE_T float16_t
#define STORAGE_BYTES 2u
#define STORAGE_VEC2 f16vec2
#define STORAGE_VEC4 f16vec4
#else
#define STORAGE_T float
#define STORAGE_BYTES 4u
#define STORAGE_VEC2 vec2
#define STORAGE_VEC4 vec4
#endif

#endif
