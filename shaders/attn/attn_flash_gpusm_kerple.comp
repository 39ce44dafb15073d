#version 450
// pebench-build: packed ATTN_PACKED
// attn.kerple, flash, GPU path: KERPLE's bias (kerple_hooks.glsl) after the reduction.
// Reductions through shared memory (devices without subgroup shuffles).
#define ATTN_GPU_SHARED_REDUCE
#include "attn/flash_gpu_decl.glsl"
#include "attn/kerple_hooks.glsl"
#include "attn/flash_gpu_main.glsl"
