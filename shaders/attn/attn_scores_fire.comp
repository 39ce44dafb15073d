#version 450
#extension GL_EXT_control_flow_attributes : require
// pebench-build: packed ATTN_PACKED
// attn.fire, naive pass 1: the scores with FIRE's bias (fire_hooks.glsl).
#define ATTN_EXTRA_PUSH float fire_c; uint fire_L; float fire_eps;
#include "attn/scores_decl.glsl"
#include "attn/fire_hooks.glsl"
#include "attn/scores_main.glsl"
