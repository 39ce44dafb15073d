#version 450
// pebench-build: packed ATTN_PACKED
// attn.shaw, naive pass 1: s = scale (q.k + q.rel_k[idx]) (shaw_hooks.glsl).
#include "attn/scores_decl.glsl"
#include "attn/shaw_hooks.glsl"
#include "attn/scores_main.glsl"
