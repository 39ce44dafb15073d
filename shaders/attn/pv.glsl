// Naive attention, pass 3 of 3: o_i = sum_j P_ij v_j for a batch of (b, h)
// slices. One item per (row, vec4 chunk of D) (scalar dims when D % 4 != 0);
// with M % 4 == 0 each step reads four probabilities at once.
//
// Hook (optional, defined before including this file):
//   ATTN_VALUE_TERM(h, qpos, kpos, c)  vec4 added to v_j's chunk c, weighted
//   like v_j (the variant's own bindings start at ATTN_PV_EXTRA_BINDING0 = 3,
//   AttnCase::naive_pv_bindings(); a function it calls can be declared before
//   this include and defined after it). Its loop over the keys is counted by
//   AttnCase::naive_pv_hook_loops().
#ifndef PEBENCH_ATTN_PV_GLSL
#define PEBENCH_ATTN_PV_GLSL

#include "common/storage.glsl"
#include "common/grid.glsl"

layout(constant_id = 1) const uint HEAD_DIM = 64;
layout(constant_id = 2) const bool VEC4 = true;    // HEAD_DIM % 4 == 0
layout(constant_id = 3) const bool VEC4_M = true;  // kv_seq % 4 == 0

layout(std430, binding = 0) readonly buffer P { float p[]; };  // [slices, N, M]
layout(std430, binding = 0) readonly buffer P4 { vec4 p4[]; };
layout(std430, binding = 1) readonly buffer V { STORAGE_T v[]; };
layout(std430, binding = 1) readonly buffer V4 { STORAGE_VEC4 v4[]; };
layout(std430, binding = 2) writeonly buffer O { STORAGE_T o[]; };
layout(std430, binding = 2) writeonly buffer O4 { STORAGE_VEC4 o4[]; };
#define ATTN_PV_EXTRA_BINDING0 3

layout(push_constant) uniform Push {
  uint heads;
  uint kv_heads;
  uint seq;
  uint kv_seq;
  uint slice0;
  uint slices;
} pc;

// v's chunk c (VEC4) or element c (scalar) of key row `row`.
vec4 pv_value(uint row, uint c) {
  return VEC4 ? vec4(v4[row * (HEAD_DIM / 4) + c]) : vec4(float(v[row * HEAD_DIM + c]), 0.0, 0.0, 0.0);
}

void main() {
  const uint per_row = VEC4 ? HEAD_DIM / 4 : HEAD_DIM;
  const uint group = pc.heads / pc.kv_heads;
  FOR_EACH_ITEM(item, pc.slices * pc.seq * per_row) {
    const uint prow = item / per_row;  // row of P in this pass
    const uint c = item - prow * per_row;
    const uint sl = prow / pc.seq;
    const uint i = prow - sl * pc.seq;
    const uint slice = pc.slice0 + sl;
    const uint b = slice / pc.heads, h = slice % pc.heads;
    const uint kv_row0 = (b * pc.kv_heads + h / group) * pc.kv_seq;
    vec4 acc = vec4(0.0);
    if (VEC4_M) {
      const uint p0 = prow * (pc.kv_seq / 4);
      for (uint j4 = 0; j4 < pc.kv_seq / 4; ++j4) {
        const vec4 w = p4[p0 + j4];
        const uint r = kv_row0 + 4 * j4;
        acc += w.x * pv_value(r, c) + w.y * pv_value(r + 1, c) + w.z * pv_value(r + 2, c) + w.w * pv_value(r + 3, c);
      }
    } else {
      for (uint j = 0; j < pc.kv_seq; ++j) acc += p[prow * pc.kv_seq + j] * pv_value(kv_row0 + j, c);
    }
#ifdef ATTN_VALUE_TERM
    {
      const uint qpos = i + pc.kv_seq - pc.seq;
      for (uint j = 0; j < pc.kv_seq; ++j) {
        const float w = p[prow * pc.kv_seq + j];
        if (w != 0.0) acc += w * ATTN_VALUE_TERM(h, qpos, j, c);
      }
    }
#endif
    const uint orow = slice * pc.seq + i;
    if (VEC4) {
      o4[orow * (HEAD_DIM / 4) + c] = STORAGE_VEC4(acc);
    } else {
      o[orow * HEAD_DIM + c] = STORAGE_T(acc.x);
    }
  }
}

#endif
