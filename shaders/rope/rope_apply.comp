#version 450
// rope.apply: y = x rotated at position p = offset + n (encodings.md section 2).
// x, y: [rows = B*H, N, D]. Per (row, n) the items are first the rotations,
// then the pass-through dims [R, D). Angles come from the fixed-point
// frequency table (common/phase.glsl), so their error does not grow with p.
// With VEC4 every access is a vec4 (neox: 4 pairs (t..t+3, t+R/2..); gptj:
// 2 interleaved pairs), which is what lavapipe rewards (docs/lavapipe.md).
#include "common/storage.glsl"
#include "common/grid.glsl"
#include "common/phase.glsl"
#include "common/rope.glsl"

layout(constant_id = 1) const bool VEC4 = false;

layout(std430, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, binding = 0) readonly buffer X4 { STORAGE_VEC4 x4[]; };
layout(std430, binding = 1) readonly buffer Freq { uvec2 freq[]; };  // th'_t as turn fractions, [R/2]
layout(std430, binding = 2) writeonly buffer Y { STORAGE_T y[]; };
layout(std430, binding = 2) writeonly buffer Y4 { STORAGE_VEC4 y4[]; };

layout(push_constant) uniform Push {
  uint rows;
  uint seq;
  uint dim;
  uint rotary_dim;
  uint offset;
  uint neox;
  float attention_factor;
} pc;

void main() {
  const uint half_r = pc.rotary_dim / 2;
  const bool neox = pc.neox != 0;
  const uint rot_items = VEC4 ? (neox ? half_r / 4 : pc.rotary_dim / 4) : half_r;
  const uint pass_items = VEC4 ? (pc.dim - pc.rotary_dim) / 4 : pc.dim - pc.rotary_dim;
  const uint per_row = rot_items + pass_items;
  const float f = pc.attention_factor;
  FOR_EACH_ITEM(item, pc.rows * pc.seq * per_row) {
    const uint rn = item / per_row;
    const uint j = item - rn * per_row;
    const uint p = pc.offset + rn % pc.seq;
    const uint base = rn * pc.dim;
    if (j >= rot_items) {  // pass-through dims
      const uint k = j - rot_items;
      if (VEC4) {
        y4[(base + pc.rotary_dim) / 4 + k] = x4[(base + pc.rotary_dim) / 4 + k];
      } else {
        y[base + pc.rotary_dim + k] = x[base + pc.rotary_dim + k];
      }
    } else if (VEC4 && neox) {
      const uint t = 4 * j;
      vec4 c, s;
      for (int q = 0; q < 4; ++q) {
        const float a = phase_angle(p, freq[t + q]);
        c[q] = cos(a);
        s[q] = sin(a);
      }
      vec4 y1, y2;
      rope_rotate4(vec4(x4[(base + t) / 4]), vec4(x4[(base + t + half_r) / 4]), c, s, f, y1, y2);
      y4[(base + t) / 4] = STORAGE_VEC4(y1);
      y4[(base + t + half_r) / 4] = STORAGE_VEC4(y2);
    } else if (VEC4) {  // gptj: (2t, 2t+1) and (2t+2, 2t+3)
      const uint t = 2 * j;
      const float a0 = phase_angle(p, freq[t]), a1 = phase_angle(p, freq[t + 1]);
      const vec4 v = vec4(x4[base / 4 + j]);
      const vec2 r0 = rope_rotate(v.x, v.y, cos(a0), sin(a0), f);
      const vec2 r1 = rope_rotate(v.z, v.w, cos(a1), sin(a1), f);
      y4[base / 4 + j] = STORAGE_VEC4(vec4(r0, r1));
    } else {
      const uint i1 = base + (neox ? j : 2 * j);
      const uint i2 = base + (neox ? j + half_r : 2 * j + 1);
      const float a = phase_angle(p, freq[j]);
      const vec2 r = rope_rotate(float(x[i1]), float(x[i2]), cos(a), sin(a), f);
      y[i1] = STORAGE_T(r.x);
      y[i2] = STORAGE_T(r.y);
    }
  }
}
