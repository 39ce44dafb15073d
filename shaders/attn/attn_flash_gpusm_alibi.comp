#version 450
// pebench-build: packed ATTN_PACKED
// attn.alibi, flash, GPU path: ALiBi's bias (alibi_hooks.glsl) after the reduction.
// Reductions through shared memory (devices without subgroup shuffles).
#define ATTN_GPU_SHARED_REDUCE
#include "attn/flash_gpu_decl.glsl"
#include "attn/alibi_hooks.glsl"
#include "attn/flash_gpu_main.glsl"
