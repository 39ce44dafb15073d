#version 450
// pebench-build: packed ATTN_PACKED
// attn.alibi, flash, GPU path: ALiBi's bias (alibi_hooks.glsl) after the reduction.
#include "attn/flash_gpu_decl.glsl"
#include "attn/alibi_hooks.glsl"
#include "attn/flash_gpu_main.glsl"
