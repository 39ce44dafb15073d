// attn.kerple's hook, shared by the flash (CPU and GPU) and the naive score
// kernels: KERPLE's bias depends on the head and the distance d = i' - j
// only, so attn_kerple_bias.comp evaluates it once per (head, distance) into
// rel_bias [H, M+N-1] (T5's layout: entry h (M+N-1) + (M-1) - i' + j), and a
// score costs one load, or, in the CPU kernel's staged band, one load a key
// for all row slots (near_window.glsl). No log or pow runs per score.
// The variant's extra binding 0 (r1 and r2 are read by the pre-pass only).
#ifndef PEBENCH_ATTN_KERPLE_HOOKS_GLSL
#define PEBENCH_ATTN_KERPLE_HOOKS_GLSL

layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer KerpleBias { float rel_bias[]; };  // [H, M+N-1]

#define NEAR_TABLE(i) rel_bias[ATTN_EXTRA_OFF(0, 4u) + (i)]
#include "attn/near_window.glsl"

void kerple_row_state(uint r, uint h, uint qpos) {
  near_base[r] = h * (pc.kv_seq + pc.seq - 1) + (pc.kv_seq - 1) - qpos;
}

// A position-only bias: added after softcap (mask.glsl).
#define ATTN_TERM_IS_BIAS true
#define ATTN_ROW_STATE(r, h, qpos) kerple_row_state(r, h, qpos)
#define ATTN_SCORE_TERM(r, h, qpos, kpos) near_entry(r, kpos)

#endif
