#version 450
// pebench-build: packed ATTN_PACKED
// pebench-build: texel ATTN_TEXEL
// attn.complex, flash: complex-order attention in the fused kernel, real and
// imaginary rows as two parts of every row (complex_hooks.glsl).
#define ATTN_PARTS 2
#include "attn/flash_decl.glsl"
#include "attn/complex_hooks.glsl"
#include "attn/flash_main.glsl"
