#version 450
// abs.sinusoidal: y = x + pe(p), p = offset + n (encodings.md section 1).
// layout 0 interleaved: pe[2t] = sin(p w_t), pe[2t+1] = cos(p w_t);
// layout 1 concat: pe[t] = sin, pe[d/2 + t] = cos.
// An item is a block of `block` consecutive positions and one group of
// frequencies. It evaluates sin and cos once, at the block's first position,
// and steps to the next position by rotating (sin, cos) by w_t: four
// multiply-adds instead of two transcendental functions, which on lavapipe
// cost many times a vec4 load. Each step's rounding adds about 2^-24, so
// after BLOCK steps (8 on lavapipe) the error is ~1e-6, far inside the
// 2^-11 Vulkan allows sin and cos themselves; every block restarts from the
// exact fixed-point angle (common/phase.glsl), so the error never grows with
// p. BLOCK divides seq (the host sees to it), so every block is whole and
// the steps need no bounds test. BLOCK is a specialization constant and its
// loop is unrolled: on
// llvmpipe every loop iteration costs. The host picks BLOCK = 1 on GPUs,
// where sin and cos are cheap and parallelism is not. Each item adds its pe
// to every batch row, stepping again per row (multiply-adds are cheap, a
// loop around the unrolled steps would not be). With VEC4 an
// item is one vec4 of outputs (interleaved: 2 frequencies) or two (concat:
// 4 frequencies), since on lavapipe each buffer access costs about the same
// whatever its width (docs/lavapipe.md).
#extension GL_EXT_control_flow_attributes : require
#include "common/storage.glsl"
#include "common/grid.glsl"
#include "common/phase.glsl"

layout(constant_id = 1) const bool VEC4 = false;
layout(constant_id = 2) const uint BLOCK = 1;  // positions per item (unrolled)
// The layout is a specialization constant, not a push constant, so that its
// branches are folded away rather than taken at every step.
layout(constant_id = 3) const bool CONCAT = false;

layout(std430, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, binding = 0) readonly buffer X4 { STORAGE_VEC4 x4[]; };
layout(std430, binding = 1) readonly buffer Freq { uvec2 freq[]; };  // w_t as turn fractions, [d/2]
layout(std430, binding = 2) writeonly buffer Y { STORAGE_T y[]; };
layout(std430, binding = 2) writeonly buffer Y4 { STORAGE_VEC4 y4[]; };
// (sin w_t, cos w_t), computed on the host in double: one position's step,
// so that an item evaluates sin and cos once per frequency, not twice.
layout(std430, binding = 3) readonly buffer Step { vec2 step_sincos[]; };

layout(push_constant) uniform Push {
  uint batch;
  uint seq;
  uint d_model;
  uint offset;
} pc;

// (sin, cos) at position p and of one step w_t, for frequency t.
void anchor(uint p, uint t, out vec2 at_p, out vec2 step) {
  const float a = phase_angle(p, freq[t]);
  at_p = vec2(sin(a), cos(a));
  step = step_sincos[t];
}

void main() {
  const uint d = pc.d_model;
  const uint half_d = d / 2;
  const uint batch_stride = pc.seq * d;
  // Frequency groups per position: scalar: 1 frequency; VEC4: 2 (interleaved) or 4 (concat).
  const uint per_row = VEC4 ? (CONCAT ? d / 8 : d / 4) : half_d;
  const uint blocks = pc.seq / BLOCK;
  FOR_EACH_ITEM(item, blocks * per_row) {
    const uint blk = item / per_row;
    const uint k = item - blk * per_row;
    const uint n0 = blk * BLOCK;
    // Frequencies t0 .. t0 + nfreq - 1 in lanes 0 .. nfreq - 1 (the rest unused).
    const uint nfreq = VEC4 ? (CONCAT ? 4 : 2) : 1;
    const uint t0 = nfreq * k;
    vec4 s = vec4(0), c = vec4(0), sw = vec4(0), cw = vec4(0);
    [[unroll]] for (uint q = 0; q < 4; ++q) {  // unrolled: constant lane indices
      if (q < nfreq) {
        vec2 a, w;
        anchor(pc.offset + n0, t0 + q, a, w);
        s[q] = a.x;
        c[q] = a.y;
        sw[q] = w.x;
        cw[q] = w.y;
      }
    }
    const vec4 s0 = s, c0 = c;
    for (uint bi = 0; bi < pc.batch; ++bi) {
      s = s0;
      c = c0;
      const uint row0 = bi * batch_stride;
      [[unroll]] for (uint step = 0; step < BLOCK; ++step) {
        const uint n = n0 + step;
        {
          if (VEC4 && !CONCAT) {
            const uint j = (row0 + n * d) / 4 + k;
            y4[j] = STORAGE_VEC4(vec4(x4[j]) + vec4(s.x, c.x, s.y, c.y));
          } else if (VEC4) {
            const uint j = (row0 + n * d + t0) / 4;
            y4[j] = STORAGE_VEC4(vec4(x4[j]) + s);
            y4[j + half_d / 4] = STORAGE_VEC4(vec4(x4[j + half_d / 4]) + c);
          } else {
            const uint i_sin = row0 + n * d + (CONCAT ? k : 2 * k);
            const uint i_cos = row0 + n * d + (CONCAT ? half_d + k : 2 * k + 1);
            y[i_sin] = STORAGE_T(float(x[i_sin]) + s.x);
            y[i_cos] = STORAGE_T(float(x[i_cos]) + c.x);
          }
        }
        phase_step(s, c, sw, cw);
      }
    }
  }
}
