#version 450
// pebench-build: packed ATTN_PACKED
// attn.complex, naive pass 1: s = scale |q.k - qi.ki + i (q.ki + qi.k)|
// (complex_hooks.glsl).
#include "attn/scores_decl.glsl"
#include "attn/complex_hooks.glsl"
#include "attn/scores_main.glsl"
