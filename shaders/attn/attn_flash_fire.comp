#version 450
// pebench-build: packed ATTN_PACKED
// pebench-build: texel ATTN_TEXEL
// attn.fire, flash: the fused kernel with FIRE's bias (fire_hooks.glsl).
#define ATTN_EXTRA_PUSH float fire_c; uint fire_L; float fire_eps;
#include "attn/flash_decl.glsl"
#include "attn/fire_hooks.glsl"
#include "attn/flash_main.glsl"
