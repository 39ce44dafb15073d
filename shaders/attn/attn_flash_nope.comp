#version 450
// pebench-build: packed ATTN_PACKED
// pebench-build: texel ATTN_TEXEL
// attn.nope, flash: plain scaled dot-product attention (no hooks).
#include "attn/flash_decl.glsl"
#include "attn/flash_main.glsl"
