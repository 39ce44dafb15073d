#version 450
// pebench-build: packed ATTN_PACKED
// attn.xl, naive pass 1: s = scale ((q + u).k + (q + vb).rk) (xl_hooks.glsl).
#include "attn/scores_decl.glsl"
#include "attn/xl_hooks.glsl"
#include "attn/scores_main.glsl"
