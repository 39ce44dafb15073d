#version 450
// pebench-build: packed ATTN_PACKED
// attn.nope, flash, GPU path (flash_gpu_decl.glsl): no hooks.
#include "attn/flash_gpu_decl.glsl"
#include "attn/flash_gpu_main.glsl"
