#version 450
// pebench-build: packed ATTN_PACKED
// attn.shaw, flash, GPU path: q.rel_k[idx] in the partial dots, rel_v[idx] as a
// value term (shaw_hooks.glsl).
// Reductions through shared memory (devices without subgroup shuffles).
#define ATTN_GPU_SHARED_REDUCE
#include "attn/flash_gpu_decl.glsl"
#include "attn/shaw_hooks.glsl"
#include "attn/flash_gpu_main.glsl"
