#version 450
// pebench-build: packed ATTN_PACKED
// attn.rope, flash, GPU path: q and k chunks rotated as they load (rope_hooks.glsl).
#define ATTN_EXTRA_PUSH float attention_factor;
#include "attn/flash_gpu_decl.glsl"
#include "attn/rope_hooks.glsl"
#include "attn/flash_gpu_main.glsl"
