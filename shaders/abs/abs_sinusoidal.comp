#version 450
// abs.sinusoidal: y = x + pe(p), p = offset + n (encodings.md section 1).
// layout 0 interleaved: pe[2t] = sin(p w_t), pe[2t+1] = cos(p w_t);
// layout 1 concat: pe[t] = sin, pe[d/2 + t] = cos.
// Each item computes its angles once and adds them to every batch row. With
// VEC4 an item is one vec4 of outputs (interleaved: 2 frequencies) or two
// (concat: 4 frequencies), since on lavapipe each buffer access costs about
// the same whatever its width (docs/lavapipe.md).
#include "common/storage.glsl"
#include "common/grid.glsl"
#include "common/phase.glsl"

layout(constant_id = 1) const bool VEC4 = false;

layout(std430, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, binding = 0) readonly buffer X4 { STORAGE_VEC4 x4[]; };
layout(std430, binding = 1) readonly buffer Freq { uvec2 freq[]; };  // w_t as turn fractions, [d/2]
layout(std430, binding = 2) writeonly buffer Y { STORAGE_T y[]; };
layout(std430, binding = 2) writeonly buffer Y4 { STORAGE_VEC4 y4[]; };

layout(push_constant) uniform Push {
  uint batch;
  uint seq;
  uint d_model;
  uint offset;
  uint layout_concat;
} pc;

vec2 sincos_at(uint p, uint t) {
  const float a = phase_angle(p, freq[t]);
  return vec2(sin(a), cos(a));
}

void main() {
  const uint d = pc.d_model;
  const uint half_d = d / 2;
  const uint batch_stride = pc.seq * d;
  const bool concat = pc.layout_concat != 0;
  // Items per position: scalar: one frequency; VEC4: 2 (interleaved) or 4 (concat) frequencies.
  const uint per_row = VEC4 ? (concat ? d / 8 : d / 4) : half_d;
  FOR_EACH_ITEM(item, pc.seq * per_row) {
    const uint n = item / per_row;
    const uint k = item - n * per_row;
    const uint p = pc.offset + n;
    if (VEC4 && !concat) {
      const vec2 a = sincos_at(p, 2 * k), b = sincos_at(p, 2 * k + 1);
      const vec4 pe = vec4(a, b);
      for (uint bi = 0, j = (n * d) / 4 + k; bi < pc.batch; ++bi, j += batch_stride / 4) {
        y4[j] = STORAGE_VEC4(vec4(x4[j]) + pe);
      }
    } else if (VEC4) {
      const uint t = 4 * k;
      const vec2 a = sincos_at(p, t), b = sincos_at(p, t + 1), c = sincos_at(p, t + 2), e = sincos_at(p, t + 3);
      const vec4 s = vec4(a.x, b.x, c.x, e.x), co = vec4(a.y, b.y, c.y, e.y);
      for (uint bi = 0, j = (n * d + t) / 4; bi < pc.batch; ++bi, j += batch_stride / 4) {
        y4[j] = STORAGE_VEC4(vec4(x4[j]) + s);
        y4[j + half_d / 4] = STORAGE_VEC4(vec4(x4[j + half_d / 4]) + co);
      }
    } else {
      const vec2 sc = sincos_at(p, k);
      uint i_sin = n * d + (concat ? k : 2 * k);
      uint i_cos = n * d + (concat ? half_d + k : 2 * k + 1);
      for (uint bi = 0; bi < pc.batch; ++bi, i_sin += batch_stride, i_cos += batch_stride) {
        y[i_sin] = STORAGE_T(float(x[i_sin]) + sc.x);
        y[i_cos] = STORAGE_T(float(x[i_cos]) + sc.y);
      }
    }
  }
}
