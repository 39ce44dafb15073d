#version 450
// pebench-build: packed ATTN_PACKED
// attn.cope, naive pass 1: the content scores scale q.k alone; CoPE's term
// needs the whole row's gates, so attn_cope_rows.comp adds it afterwards.
#define ATTN_EXTRA_PUSH uint npos; uint cope_nodiv;
#include "attn/scores_decl.glsl"
#include "attn/scores_main.glsl"
