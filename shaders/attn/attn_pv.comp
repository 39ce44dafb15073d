#version 450
// attn.nope, attn.rope, attn.alibi, naive pass 3: o = P v.
#include "attn/pv.glsl"
