#version 450
// abs.hierarchical: a table of n0 rows serving n0^2 positions (encodings.md
// section 1). With p = offset + n = q n0 + r:
//   u = (table - alpha table[0]) / (1 - alpha)
//   y = x + alpha u[q] + (1 - alpha) u[r]
// u is formed here from the three table rows it needs (table[q], table[r],
// table[0]); nothing is precomputed on the host beyond 1/(1-alpha). One item
// per (position n, channel group), looping over the batch so the table rows
// are read once per position; VEC4 (d % 4 == 0) makes every access a vec4.
#include "common/storage.glsl"
#include "common/grid.glsl"

layout(constant_id = 1) const bool VEC4 = false;

layout(std430, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, binding = 0) readonly buffer X4 { STORAGE_VEC4 x4[]; };
layout(std430, binding = 1) readonly buffer Table { STORAGE_T table[]; };
layout(std430, binding = 1) readonly buffer Table4 { STORAGE_VEC4 table4[]; };
layout(std430, binding = 2) writeonly buffer Y { STORAGE_T y[]; };
layout(std430, binding = 2) writeonly buffer Y4 { STORAGE_VEC4 y4[]; };

layout(push_constant) uniform Push {
  uint batch;
  uint seq;
  uint d_model;
  uint offset;
  uint n0;
  float alpha;
  float inv_one_minus_alpha;  // 1 / (1 - alpha)
} pc;

void main() {
  const uint width = VEC4 ? 4 : 1;
  const uint row_items = pc.d_model / width;
  const uint items = pc.seq * row_items;
  const float a = pc.alpha;
  const float k = pc.inv_one_minus_alpha;
  FOR_EACH_ITEM(i, items) {
    const uint n = i / row_items;
    const uint c = i - n * row_items;
    const uint p = pc.offset + n;
    const uint q = p / pc.n0;
    const uint r = p - q * pc.n0;
    if (VEC4) {
      const vec4 t0 = vec4(table4[c]);
      const vec4 uq = (vec4(table4[q * row_items + c]) - a * t0) * k;
      const vec4 ur = (vec4(table4[r * row_items + c]) - a * t0) * k;
      const vec4 pe = a * uq + (1.0 - a) * ur;
      for (uint b = 0, j = i; b < pc.batch; ++b, j += items) y4[j] = STORAGE_VEC4(vec4(x4[j]) + pe);
    } else {
      const float t0 = float(table[c]);
      const float uq = (float(table[q * row_items + c]) - a * t0) * k;
      const float ur = (float(table[r * row_items + c]) - a * t0) * k;
      const float pe = a * uq + (1.0 - a) * ur;
      for (uint b = 0, j = i; b < pc.batch; ++b, j += items) y[j] = STORAGE_T(float(x[j]) + pe);
    }
  }
}
