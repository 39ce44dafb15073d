#version 450
// pebench-build: packed ATTN_PACKED
// attn.rope, flash, GPU path: q and k chunks rotated as they load (rope_hooks.glsl).
// Reductions through shared memory (devices without subgroup shuffles).
#define ATTN_GPU_SHARED_REDUCE
#define ATTN_EXTRA_PUSH float attention_factor; uint mrope_s0; uint mrope_s1; uint mrope_s2; float xpos_rate; uint xpos_centre;
#include "attn/flash_gpu_decl.glsl"
#include "attn/rope_hooks.glsl"
#include "attn/flash_gpu_main.glsl"
