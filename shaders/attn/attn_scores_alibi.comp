#version 450
// attn.alibi, naive pass 1: the scores with ALiBi's bias (alibi_hooks.glsl).
#include "attn/scores_decl.glsl"
#include "attn/alibi_hooks.glsl"
#include "attn/scores_main.glsl"
