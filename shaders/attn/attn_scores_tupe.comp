#version 450
// pebench-build: packed ATTN_PACKED
// attn.tupe, naive pass 1: the scores with TUPE's untied positional term and T5 bias
// (tupe_hooks.glsl).
#include "attn/scores_decl.glsl"
#include "attn/tupe_hooks.glsl"
#include "attn/scores_main.glsl"
