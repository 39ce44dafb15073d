#version 450
// pebench-build: packed ATTN_PACKED
// attn.kerple, flash, GPU path: KERPLE's bias (kerple_hooks.glsl) after the reduction.
#include "attn/flash_gpu_decl.glsl"
#include "attn/kerple_hooks.glsl"
#include "attn/flash_gpu_main.glsl"
