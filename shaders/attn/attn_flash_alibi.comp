#version 450
// pebench-build: packed ATTN_PACKED
// pebench-build: texel ATTN_TEXEL
// attn.alibi, flash: the fused kernel with ALiBi's bias (alibi_hooks.glsl).
#include "attn/flash_decl.glsl"
#include "attn/alibi_hooks.glsl"
#include "attn/flash_main.glsl"
