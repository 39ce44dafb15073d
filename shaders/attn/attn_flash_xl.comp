#version 450
// pebench-build: packed ATTN_PACKED
// pebench-build: texel ATTN_TEXEL
// attn.xl, flash: Transformer-XL's content and position terms in the fused
// kernel, each rk row read once per invocation and shared by its
// consecutive positions (xl_hooks.glsl).
#define ATTN_SLOTS_BY_HEAD
#include "attn/flash_decl.glsl"
#include "attn/xl_hooks.glsl"
#include "attn/flash_main.glsl"
