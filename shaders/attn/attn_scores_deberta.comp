#version 450
// pebench-build: packed ATTN_PACKED
// attn.deberta, naive pass 1: the scores with DeBERTa's c2p and p2c terms
// gathered from the pre-computed tables (deberta_hooks.glsl).
#define ATTN_EXTRA_PUSH uint idx_lo; uint rel_width; uint two_s;
#include "attn/scores_decl.glsl"
#include "attn/deberta_hooks.glsl"
#include "attn/scores_main.glsl"
