#version 450
// pebench-build: packed ATTN_PACKED
// attn.fire, flash, GPU path: FIRE's bias (fire_hooks.glsl) after the reduction.
// Reductions through shared memory (devices without subgroup shuffles).
#define ATTN_GPU_SHARED_REDUCE
#define ATTN_EXTRA_PUSH float fire_c; uint fire_L; float fire_eps;
#include "attn/flash_gpu_decl.glsl"
#include "attn/fire_hooks.glsl"
#include "attn/flash_gpu_main.glsl"
