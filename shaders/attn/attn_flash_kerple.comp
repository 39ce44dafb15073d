#version 450
// pebench-build: packed ATTN_PACKED
// pebench-build: texel ATTN_TEXEL
// attn.kerple, flash: the fused kernel with KERPLE's bias (kerple_hooks.glsl).
#include "attn/flash_decl.glsl"
#include "attn/kerple_hooks.glsl"
#include "attn/flash_main.glsl"
