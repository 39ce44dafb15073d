#version 450
// pebench-build: packed ATTN_PACKED
// attn.complex, flash, GPU path: real and imaginary parts, the score from two
// reduced dots (complex_hooks.glsl).
#define ATTN_PARTS 2
#include "attn/flash_gpu_decl.glsl"
#include "attn/complex_hooks.glsl"
#include "attn/flash_gpu_main.glsl"
