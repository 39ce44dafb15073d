#version 450
// pebench-build: packed ATTN_PACKED
// attn.t5, flash, GPU path: T5's bucketed bias (t5_hooks.glsl) after the reduction.
// Reductions through shared memory (devices without subgroup shuffles).
#define ATTN_GPU_SHARED_REDUCE
#include "attn/flash_gpu_decl.glsl"
#include "attn/t5_hooks.glsl"
#include "attn/flash_gpu_main.glsl"
