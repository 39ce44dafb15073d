#version 450
// pebench-build: packed ATTN_PACKED
// pebench-build: texel ATTN_TEXEL
// attn.tupe, flash: the fused kernel with TUPE's untied positional term and T5 bias
// (tupe_hooks.glsl).
#include "attn/flash_decl.glsl"
#include "attn/tupe_hooks.glsl"
#include "attn/flash_main.glsl"
