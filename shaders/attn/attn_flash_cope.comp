#version 450
// pebench-build: packed ATTN_PACKED
// pebench-build: texel ATTN_TEXEL
// attn.cope, flash: the fused kernel walking the keys from last to first
// with CoPE's gated suffix sums (cope_hooks.glsl).
#define ATTN_EXTRA_PUSH uint npos; uint cope_nodiv;
#define ATTN_KEYS_LAST_TO_FIRST
#include "attn/flash_decl.glsl"
#include "attn/cope_hooks.glsl"
#include "attn/flash_main.glsl"
