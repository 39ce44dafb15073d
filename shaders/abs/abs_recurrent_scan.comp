#version 450
// abs.recurrent, impl=scan: the same recurrence P[k+1] = R P[k] evaluated as
// a parallel prefix product (encodings.md section 1). A pair's rotation
// (s, c) -> (s cos th + c sin th, c cos th - s sin th) is multiplication by
// the unit complex number cos th + i sin th, so P[k] = R^k P[0] and the
// prefix products of the per-step matrices compose by complex products.
// Values are stored as vec2(im, re) = (sin, cos), the layout of pos.
//
// A workgroup is TG pair groups x TN lanes along positions, K consecutive
// positions per lane (lane = n_local * TG + g_local, so neighbouring lanes
// write neighbouring columns), and walks its tiles of TN * K positions in
// order. Per tile: each lane multiplies its K steps in order, a
// Hillis-Steele scan in shared memory (log2 TN levels) gives each lane the
// product of the lanes before it, and every position is the carry (the
// product of all earlier steps) times that times its lane prefix; then the
// carry moves past the tile. The carry starts at R^offset, the run of
// `offset` identical steps before the first token reduced by squaring (what
// a scan's up-sweep computes for a uniform run). The host splits long
// sequences into several dispatches (llvmpipe's loop limit); the carry is
// kept in `state` between them.
#include "common/storage.glsl"

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 1) const bool VEC4 = false;  // two pairs (one vec4 of pos) per lane
layout(constant_id = 2) const uint TG = 1;        // pair groups per workgroup; TN = WG / TG lanes along positions
layout(constant_id = 3) const uint K = 1;         // consecutive positions per lane

layout(std430, binding = 0) readonly buffer X2 { STORAGE_VEC2 x2[]; };
layout(std430, binding = 0) readonly buffer X4 { STORAGE_VEC4 x4[]; };
// rot_state: per pair (sin th_t, cos th_t), then the state after them (at
// pair group pc.groups), both f32: one binding, so that the kernel binds 4
// storage buffers (the Android baseline).
layout(std430, binding = 1) readonly buffer Rot { vec4 rot4[]; };
layout(std430, binding = 1) readonly buffer Rot2 { vec2 rot2[]; };
layout(std430, binding = 1) buffer State { vec4 state4_at[]; };  // carry in/out between dispatches
layout(std430, binding = 1) buffer State2 { vec2 state2_at[]; };
layout(std430, binding = 2) writeonly buffer Pos2 { STORAGE_VEC2 pos2[]; };
layout(std430, binding = 2) writeonly buffer Pos4 { STORAGE_VEC4 pos4[]; };
layout(std430, binding = 3) writeonly buffer Y2 { STORAGE_VEC2 y2[]; };
layout(std430, binding = 3) writeonly buffer Y4 { STORAGE_VEC4 y4[]; };

layout(push_constant) uniform Push {
  uint batch;
  uint seq;
  uint groups;  // pair groups per position: d/4 (VEC4) or d/2
  uint offset;
  uint tile_begin;
  uint tile_end;
} pc;

#define state4 (state4_at[pc.groups + g])
#define state2 (state2_at[pc.groups + g])

shared vec4 tile[gl_WorkGroupSize.x];

// (s1, c1) * (s2, c2) as complex numbers c + i s.
vec2 cmul(vec2 a, vec2 b) {
  return vec2(a.y * b.x + a.x * b.y, a.y * b.y - a.x * b.x);
}
vec4 cmul2(vec4 a, vec4 b) {
  return vec4(cmul(a.xy, b.xy), cmul(a.zw, b.zw));
}

void main() {
  const uint TN = gl_WorkGroupSize.x / TG;
  const uint lane = gl_LocalInvocationID.x;
  const uint g_local = lane % TG;
  const uint n_local = lane / TG;
  const uint g = gl_WorkGroupID.x * TG + g_local;
  const bool in_range = g < pc.groups;  // idle lanes still take part in every barrier
  const vec4 identity = vec4(0, 1, 0, 1);
  const vec4 r = !in_range ? identity : VEC4 ? rot4[g] : vec4(rot2[g], 0, 1);

  vec4 carry;
  if (pc.tile_begin == 0) {
    carry = identity;
    vec4 base = r;
    for (uint e = pc.offset; e != 0; e >>= 1) {
      if ((e & 1u) != 0) carry = cmul2(carry, base);
      base = cmul2(base, base);
    }
  } else {
    carry = !in_range ? identity : VEC4 ? state4 : vec4(state2, 0, 1);
  }

  const uint batch_stride = pc.seq * pc.groups;
  for (uint tb = pc.tile_begin; tb < pc.tile_end; ++tb) {
    const uint n0 = (tb * TN + n_local) * K;
    // This lane's K steps, prefix-multiplied in order. The step into
    // position n is R; position 0 is the carry (R^offset) itself.
    vec4 local_prefix[K];
    vec4 acc = n0 == 0 ? identity : r;
    local_prefix[0] = acc;
    for (uint j = 1; j < K; ++j) {
      acc = cmul2(acc, r);
      local_prefix[j] = acc;
    }
    // Hillis-Steele over the lanes' products: v = product of lanes 0..n_local.
    vec4 v = acc;
    for (uint off = 1; off < TN; off <<= 1) {
      tile[lane] = v;
      barrier();
      if (n_local >= off) v = cmul2(tile[lane - off * TG], v);
      barrier();
    }
    tile[lane] = v;
    barrier();
    const vec4 tile_total = tile[(TN - 1) * TG + g_local];
    // Everything before this lane's first step: the carry and earlier lanes.
    const vec4 before = n_local == 0 ? carry : cmul2(carry, tile[lane - TG]);
    for (uint j = 0; j < K; ++j) {
      const uint n = n0 + j;
      const vec4 z = cmul2(before, local_prefix[j]);
      if (in_range && n < pc.seq) {
        const uint i = n * pc.groups + g;
        if (VEC4) {
          pos4[i] = STORAGE_VEC4(z);
          for (uint b = 0, q = i; b < pc.batch; ++b, q += batch_stride) y4[q] = STORAGE_VEC4(vec4(x4[q]) + z);
        } else {
          pos2[i] = STORAGE_VEC2(z.xy);
          for (uint b = 0, q = i; b < pc.batch; ++b, q += batch_stride) y2[q] = STORAGE_VEC2(vec2(x2[q]) + z.xy);
        }
      }
    }
    carry = cmul2(carry, tile_total);
    barrier();  // the next tile overwrites `tile`
  }
  if (in_range && n_local == 0) {
    if (VEC4) {
      state4 = carry;
    } else {
      state2 = carry.xy;
    }
  }
}
