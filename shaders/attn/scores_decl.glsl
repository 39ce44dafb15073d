// Naive attention, pass 1 of 3, part 1 of 2: interface. Writes the score
// matrix of a batch of (b, h) slices: scores[slice, i, j] = scale q_i.k_j
// (+ ATTN_SCORE_TERM), ATTN_MASKED where key j is not visible. A variant's
// kernel is a small .comp file:
//
//   #version 450
//   #define ATTN_EXTRA_PUSH ...          (optional)
//   #include "attn/scores_decl.glsl"
//   ... bindings ATTN_EXTRA_BINDING(i), functions, ATTN_SCORE_TERM(h, qpos, kpos)
//   #include "attn/scores_main.glsl"
//
// The hook may read the scaled q row with attn_q_chunk(c) (loaded on each
// call: naive reads memory rather than keeping rows in registers).
// ATTN_SCORE(h, qpos, kpos, q_base, k_base), if defined, replaces scale q.k
// (the q row of head h at element q_base, the k row at k_base) with the
// variant's whole score, in one loop over D like the default's (Shaw, XL,
// complex); ATTN_SCORE_TERM is still added.
#ifndef PEBENCH_ATTN_SCORES_DECL_GLSL
#define PEBENCH_ATTN_SCORES_DECL_GLSL

#include "common/storage.glsl"
#include "common/grid.glsl"
#include "attn/attn_util.glsl"

layout(constant_id = 1) const uint HEAD_DIM = 64;
layout(constant_id = 2) const bool VEC4 = true;  // HEAD_DIM % 4 == 0

layout(std430, binding = 0) readonly buffer Q { STORAGE_T q[]; };
layout(std430, binding = 0) readonly buffer Q4 { STORAGE_VEC4 q4[]; };
layout(std430, binding = 1) readonly buffer K { STORAGE_T k[]; };
layout(std430, binding = 1) readonly buffer K4 { STORAGE_VEC4 k4[]; };
#include "attn/attn_pack.glsl"
#ifdef ATTN_PACKED
#define ATTN_PACK_BINDING 2
#else
#define ATTN_EXTRA_BINDING0 3
#endif
layout(std430, binding = 2) writeonly buffer Scores { float scores[]; };  // [slices, N, M]
#define ATTN_SCORES_OFF ATTN_PACK_OFF(ATTN_PACK_OUT, 4u)

#ifndef ATTN_EXTRA_PUSH
#define ATTN_EXTRA_PUSH
#endif

layout(push_constant) uniform Push {
  ATTN_PUSH_SHAPE
  uint slice0;      // first (b, h) slice of this pass: slice = b*H + h
  uint slices;      // slices in this pass
  ATTN_EXTRA_PUSH
} pc;

#include "attn/mask.glsl"

// One row slot (the flash kernel's hooks index per-row state by slot).
#define ATTN_ROW_SLOTS 1
uint attn_q_base;  // first element of the current q row

vec4 attn_q_chunk(uint r, uint c) {
  if (VEC4) return vec4(q4[attn_q_base / 4 + c]) * pc.scale;
  vec4 x = vec4(0.0);
  for (uint u = 0; u < 4 && 4 * c + u < HEAD_DIM; ++u) x[u] = float(q[attn_q_base + 4 * c + u]);
  return x * pc.scale;
}

#endif
