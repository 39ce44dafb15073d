#version 450
// abs.complex_order in three passes of 4 storage buffers each, for devices
// that bind fewer than the fused kernel's 6 (the Android baseline allows 4):
//   PART 0: tokens, freq, phase -> zr = cos(freq[t] p + phase[t])
//   PART 1: tokens, freq, phase -> zi = sin(freq[t] p + phase[t])
//   PART 2: tokens, amp, zr, zi -> zr *= amp[t], zi *= amp[t] (in place)
// The angle is reduced exactly as in the fused kernel (complex_angle.glsl);
// PART 2 rounds the output a second time (tolerance() allows for it).
#include "common/storage.glsl"
#include "common/grid.glsl"
#include "abs/complex_angle.glsl"

layout(constant_id = 1) const bool VEC4 = false;
layout(constant_id = 2) const uint PART = 0;

layout(std430, binding = 0) readonly buffer Tokens { uint tokens[]; };
layout(std430, binding = 1) readonly buffer A { STORAGE_T a[]; };  // freq, or amp in PART 2
layout(std430, binding = 1) readonly buffer A4 { STORAGE_VEC4 a4[]; };
layout(std430, binding = 2) buffer B { STORAGE_T b[]; };  // phase, or zr in PART 2
layout(std430, binding = 2) buffer B4 { STORAGE_VEC4 b4[]; };
layout(std430, binding = 3) buffer C { STORAGE_T c[]; };  // zr or zi
layout(std430, binding = 3) buffer C4 { STORAGE_VEC4 c4[]; };

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
    const uint ch = i - row * row_items;
    const uint p = pc.offset + row % pc.seq;
    const uint src = min(tokens[row], pc.vocab - 1u) * row_items + ch;
    if (PART == 2) {
      if (VEC4) {
        const vec4 r = vec4(a4[src]);
        b4[i] = STORAGE_VEC4(r * vec4(b4[i]));
        c4[i] = STORAGE_VEC4(r * vec4(c4[i]));
      } else {
        const float r = float(a[src]);
        b[i] = STORAGE_T(r * float(b[i]));
        c[i] = STORAGE_T(r * float(c[i]));
      }
    } else if (VEC4) {
      const vec4 f = vec4(a4[src]), ph = vec4(b4[src]);
      const vec4 t = vec4(angle(f.x, ph.x, p), angle(f.y, ph.y, p), angle(f.z, ph.z, p), angle(f.w, ph.w, p));
      c4[i] = STORAGE_VEC4(PART == 0 ? cos(t) : sin(t));
    } else {
      const float t = angle(float(a[src]), float(b[src]), p);
      c[i] = STORAGE_T(PART == 0 ? cos(t) : sin(t));
    }
  }
}
