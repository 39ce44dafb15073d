#version 450
// pebench-build: packed ATTN_PACKED
// attn.cope, flash, GPU path: keys from last to first, CoPE's term
// (cope_hooks.glsl) after the reduction.
#define ATTN_EXTRA_PUSH uint npos; uint cope_nodiv;
#define ATTN_KEYS_LAST_TO_FIRST
#include "attn/flash_gpu_decl.glsl"
#include "attn/cope_hooks.glsl"
#include "attn/flash_gpu_main.glsl"
