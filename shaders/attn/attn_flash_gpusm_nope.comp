#version 450
// pebench-build: packed ATTN_PACKED
// attn.nope, flash, GPU path (flash_gpu_decl.glsl): no hooks.
// Reductions through shared memory (devices without subgroup shuffles).
#define ATTN_GPU_SHARED_REDUCE
#include "attn/flash_gpu_decl.glsl"
#include "attn/flash_gpu_main.glsl"
