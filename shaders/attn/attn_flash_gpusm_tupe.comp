#version 450
// pebench-build: packed ATTN_PACKED
// attn.tupe, flash, GPU path: the untied term in the lanes' partial dots, T5 bias
// after the reduction (tupe_hooks.glsl).
// Reductions through shared memory (devices without subgroup shuffles).
#define ATTN_GPU_SHARED_REDUCE
#include "attn/flash_gpu_decl.glsl"
#include "attn/tupe_hooks.glsl"
#include "attn/flash_gpu_main.glsl"
