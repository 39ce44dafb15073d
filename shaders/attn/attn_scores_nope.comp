#version 450
// pebench-build: packed ATTN_PACKED
// attn.nope (and attn.rope on pre-rotated q, k), naive pass 1: the scores.
#include "attn/scores_decl.glsl"
#include "attn/scores_main.glsl"
