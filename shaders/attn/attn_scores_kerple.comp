#version 450
// pebench-build: packed ATTN_PACKED
// attn.kerple, naive pass 1: the scores with KERPLE's bias (kerple_hooks.glsl).
#include "attn/scores_decl.glsl"
#include "attn/kerple_hooks.glsl"
#include "attn/scores_main.glsl"
