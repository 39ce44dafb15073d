#version 450
// pebench-build: packed ATTN_PACKED
// pebench-build: texel ATTN_TEXEL
// attn.t5, flash: the fused kernel with T5's bucketed bias (t5_hooks.glsl).
#include "attn/flash_decl.glsl"
#include "attn/t5_hooks.glsl"
#include "attn/flash_main.glsl"
