#version 450
// pebench-build: packed ATTN_PACKED
// attn.t5, naive pass 1: the scores with T5's bucketed bias (t5_hooks.glsl).
#include "attn/scores_decl.glsl"
#include "attn/t5_hooks.glsl"
#include "attn/scores_main.glsl"
