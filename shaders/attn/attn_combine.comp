#version 450
// Flash-decoding combine: o = sum_s e^(m_s - m) acc_s / sum_s e^(m_s - m) l_s
// over the key splits' partials (m_s, l_s, acc_s) of each query row, with
// m = max_s m_s. A split that saw no visible key has l_s = 0 and weight 0.
// Partial rows hold d4p chunks, every output part's (ATTN_PARTS); one
// dispatch combines one part, chunks [c0, c0 + ceil(dim/4)), into `o`.
#include "common/storage.glsl"
#include "common/grid.glsl"
#include "attn/attn_util.glsl"

layout(constant_id = 1) const bool VEC4 = true;  // dim % 4 == 0: vec4 stores of o

layout(std430, binding = 0) readonly buffer PartML { vec2 part_ml[]; };    // [splits, rows]
layout(std430, binding = 1) readonly buffer PartAcc { vec4 part_acc[]; };  // [splits, rows, d4p]
layout(std430, binding = 2) writeonly buffer O { STORAGE_T o[]; };
layout(std430, binding = 2) writeonly buffer O4 { STORAGE_VEC4 o4[]; };

layout(push_constant) uniform Push {
  uint rows;    // B*H*N
  uint splits;
  uint dim;     // D
  uint d4p;     // vec4 chunks per partial row
  uint c0;      // first chunk of this output's part
} pc;

void main() {
  const uint d4 = (pc.dim + 3) / 4;
  FOR_EACH_ITEM(item, pc.rows * d4) {
    const uint row = item / d4;
    const uint c = item - row * d4;
    float m = ATTN_MASKED;
    for (uint s = 0; s < pc.splits; ++s) m = max(m, part_ml[s * pc.rows + row].x);
    float l = 0.0;
    vec4 acc = vec4(0.0);
    for (uint s = 0; s < pc.splits; ++s) {
      const vec2 ml = part_ml[s * pc.rows + row];
      const float w = ml.y > 0.0 ? exp(ml.x - m) : 0.0;
      l += w * ml.y;
      acc += w * part_acc[(s * pc.rows + row) * pc.d4p + pc.c0 + c];
    }
    const vec4 out_c = l > 0.0 ? acc / l : vec4(0.0);
    if (VEC4) {
      o4[row * (pc.dim / 4) + c] = STORAGE_VEC4(out_c);
    } else {
      for (uint u = 0; u < 4 && 4 * c + u < pc.dim; ++u) o[row * pc.dim + 4 * c + u] = STORAGE_T(out_c[u]);
    }
  }
}
