#version 450
// pebench-build: packed ATTN_PACKED
// attn.deberta, flash, GPU path: c2p and p2c from tables after the reduction, or
// as partial dots (deberta_hooks.glsl).
#define ATTN_EXTRA_PUSH uint idx_lo; uint rel_width; uint two_s;
#include "attn/flash_gpu_decl.glsl"
#include "attn/deberta_hooks.glsl"
#include "attn/flash_gpu_main.glsl"
