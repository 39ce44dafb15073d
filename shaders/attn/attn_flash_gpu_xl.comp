#version 450
// pebench-build: packed ATTN_PACKED
// attn.xl, flash, GPU path: q + u as q loads, (q + vb).rk in the partial dots
// (xl_hooks.glsl).
#include "attn/flash_gpu_decl.glsl"
#include "attn/xl_hooks.glsl"
#include "attn/flash_gpu_main.glsl"
