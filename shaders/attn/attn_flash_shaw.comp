#version 450
// pebench-build: packed ATTN_PACKED
// pebench-build: texel ATTN_TEXEL
// attn.shaw, flash: the fused kernel with Shaw's key and value terms, per
// distance (shaw_hooks.glsl).
#include "attn/flash_decl.glsl"
#include "attn/shaw_hooks.glsl"
#include "attn/flash_main.glsl"
