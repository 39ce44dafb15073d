#version 450
// pebench-build: packed ATTN_PACKED
// pebench-build: texel ATTN_TEXEL
// attn.deberta, flash: the fused kernel with DeBERTa's c2p and p2c terms
// (deberta_hooks.glsl).
#define ATTN_EXTRA_PUSH uint idx_lo; uint rel_width; uint two_s;
#include "attn/flash_decl.glsl"
#include "attn/deberta_hooks.glsl"
#include "attn/flash_main.glsl"
