#version 450
// abs.complex_order: word-dependent complex embedding (Wang et al. 2020;
// encodings.md section 1). With t = tokens[b, n] and p = offset + n:
//   zr = amp[t] cos(freq[t] p + phase[t]),  zi = amp[t] sin(freq[t] p + phase[t]).
// freq[t] p grows with p: in f32 the product alone loses |freq| p 2^-24 rad
// (about 1300 rad at freq 10, p = 2^31), and sin/cos are only specified on
// [-pi, pi]. So the angle is reduced exactly, in turns: a float is an
// integer times a power of two, so its fraction of a turn can be taken with
// 128 bits of 1/(2 pi) in integer arithmetic (Payne-Hanek) to 64 bits, and
// p times that (as in common/phase.glsl) to 32. The angle's error is then
// about 2^-23 pi rad at every position.
// One item per (token, channel group); with VEC4 (d % 4 == 0) every table and
// output access is a vec4 (docs/lavapipe.md).
#include "common/storage.glsl"
#include "common/grid.glsl"
#include "abs/complex_angle.glsl"

layout(constant_id = 1) const bool VEC4 = false;

layout(std430, binding = 0) readonly buffer Tokens { uint tokens[]; };
layout(std430, binding = 1) readonly buffer Amp { STORAGE_T amp[]; };
layout(std430, binding = 1) readonly buffer Amp4 { STORAGE_VEC4 amp4[]; };
layout(std430, binding = 2) readonly buffer Freq { STORAGE_T freq[]; };
layout(std430, binding = 2) readonly buffer Freq4 { STORAGE_VEC4 freq4[]; };
layout(std430, binding = 3) readonly buffer Phase { STORAGE_T phase[]; };
layout(std430, binding = 3) readonly buffer Phase4 { STORAGE_VEC4 phase4[]; };
layout(std430, binding = 4) writeonly buffer Zr { STORAGE_T zr[]; };
layout(std430, binding = 4) writeonly buffer Zr4 { STORAGE_VEC4 zr4[]; };
layout(std430, binding = 5) writeonly buffer Zi { STORAGE_T zi[]; };
layout(std430, binding = 5) writeonly buffer Zi4 { STORAGE_VEC4 zi4[]; };

layout(push_constant) uniform Push {
  uint rows;  // B * N
  uint seq;
  uint d_model;
  uint offset;
  uint vocab;
} pc;

void main() {
  const uint width = VEC4 ? 4 : 1;
  const uint row_items = pc.d_model / width;
  FOR_EACH_ITEM(i, pc.rows * row_items) {
    const uint row = i / row_items;
    const uint c = i - row * row_items;
    const uint p = pc.offset + row % pc.seq;
    // Tokens are drawn in [0, vocab); the clamp keeps a bad one from reading past the tables.
    const uint src = min(tokens[row], pc.vocab - 1u) * row_items + c;
    if (VEC4) {
      const vec4 f = vec4(freq4[src]), ph = vec4(phase4[src]);
      const vec4 a = vec4(angle(f.x, ph.x, p), angle(f.y, ph.y, p), angle(f.z, ph.z, p), angle(f.w, ph.w, p));
      const vec4 r = vec4(amp4[src]);
      zr4[i] = STORAGE_VEC4(r * cos(a));
      zi4[i] = STORAGE_VEC4(r * sin(a));
    } else {
      const float a = angle(float(freq[src]), float(phase[src]), p);
      const float r = float(amp[src]);
      zr[i] = STORAGE_T(r * cos(a));
      zi[i] = STORAGE_T(r * sin(a));
    }
  }
}
