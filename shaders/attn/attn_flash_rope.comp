#version 450
// pebench-build: packed ATTN_PACKED
// pebench-build: texel ATTN_TEXEL
// attn.rope, flash: q and k rotated inside the fused kernel (rope_hooks.glsl).
#define ATTN_EXTRA_PUSH float attention_factor; uint mrope_s0; uint mrope_s1; uint mrope_s2; float xpos_rate; uint xpos_centre;
#include "attn/flash_decl.glsl"
#include "attn/rope_hooks.glsl"
#include "attn/flash_main.glsl"
