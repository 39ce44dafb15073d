#version 450
// pebench-build: packed ATTN_PACKED
// attn.alibi, naive pass 1: the scores with ALiBi's bias (alibi_hooks.glsl).
#include "attn/scores_decl.glsl"
#include "attn/alibi_hooks.glsl"
#include "attn/scores_main.glsl"
