#version 450
// abs.sinusoidal: y = x + pe(p), p = offset + n (encodings.md section 1).
// layout 0 interleaved: pe[2t] = sin(p w_t), pe[2t+1] = cos(p w_t);
// layout 1 concat: pe[t] = sin, pe[d/2 + t] = cos. fairseq's layout is
// concat with its own frequencies and offset (the host's), and may have an
// odd d: its last column is copied (pe 0) by the scalar path's k = 0 items.
// An item is one batch row, one group of frequencies and BLOCK positions
// seq / BLOCK apart (n0, n0 + seq/BLOCK, ...). It evaluates sin and cos once,
// at n0, and steps to the next position by rotating (sin, cos) by
// (seq/BLOCK) w_t (from the host's table, in double): four multiply-adds
// instead of two transcendental functions, which on lavapipe cost many
// times a vec4 load. Each step's rounding adds about 2^-24, so after BLOCK
// steps (8 on lavapipe) the error is ~1e-6, far inside the 2^-11 Vulkan
// allows sin and cos themselves; every item starts from the exact
// fixed-point angle (common/phase.glsl), so the error never grows with p.
// BLOCK divides seq (the host sees to it), so the steps need no bounds
// test; it is a specialization constant and its loop is unrolled. The host
// picks BLOCK = 1 on GPUs, where sin and cos are cheap and parallelism is
// not. With VEC4 an item's step is one vec4 of outputs (interleaved: 2
// frequencies) or two (concat: 4 frequencies), since on lavapipe each buffer
// access costs about the same whatever its width (docs/lavapipe.md).
// ONE_PASS (the host launched one invocation per item): no loop at all. On
// lavapipe a loop around the accesses cost about a fifth of the time, and
// an item's positions a grid's length apart, as `pebench peak`'s copy
// walks, ran faster than consecutive rows (docs/lavapipe.md).
#extension GL_EXT_control_flow_attributes : require
#include "common/storage.glsl"
#include "common/grid.glsl"
#include "common/phase.glsl"

layout(constant_id = 1) const bool VEC4 = false;
layout(constant_id = 2) const uint BLOCK = 1;  // positions per item (unrolled)
// The layout is a specialization constant, not a push constant, so that its
// branches are folded away rather than taken at every step.
layout(constant_id = 3) const bool CONCAT = false;
layout(constant_id = 4) const bool ONE_PASS = false;

layout(std430, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, binding = 0) readonly buffer X4 { STORAGE_VEC4 x4[]; };
// Per frequency t: w_t as a 64-bit turn fraction (lo, hi; common/phase.glsl),
// then (sin dw_t, cos dw_t) as float bits, d = seq / BLOCK, computed on the
// host in double: the rotation from one of an item's positions to the next.
// One table, so that an anchor is one load (on lavapipe each costs the same
// whatever its width).
layout(std430, binding = 1) readonly buffer Freq { uvec4 freq_step[]; };  // [d/2]
layout(std430, binding = 2) writeonly buffer Y { STORAGE_T y[]; };
layout(std430, binding = 2) writeonly buffer Y4 { STORAGE_VEC4 y4[]; };

layout(push_constant) uniform Push {
  uint batch;
  uint seq;
  uint d_model;
  uint offset;
} pc;

// Frequency groups per position: scalar: 1 frequency; VEC4: 2 (interleaved) or 4 (concat).
uint groups_per_row() { return VEC4 ? (CONCAT ? pc.d_model / 8 : pc.d_model / 4) : pc.d_model / 2; }
uint item_count() { return pc.batch * (pc.seq / BLOCK) * groups_per_row(); }

void sinusoidal_item(uint item) {
  const uint d = pc.d_model;
  const uint half_d = d / 2;
  const uint per_row = groups_per_row();
  const uint blocks = pc.seq / BLOCK;  // positions between an item's steps
  const uint per_batch = blocks * per_row;
  const uint bi = ONE_PASS ? one_pass_div(item, per_batch) : item / per_batch;
  const uint in_batch = item - bi * per_batch;
  const uint n0 = ONE_PASS ? one_pass_div(in_batch, per_row) : in_batch / per_row;
  const uint k = in_batch - n0 * per_row;
  // Frequencies t0 .. t0 + nfreq - 1 in lanes 0 .. nfreq - 1 (the rest unused).
  const uint nfreq = VEC4 ? (CONCAT ? 4 : 2) : 1;
  const uint t0 = nfreq * k;
  vec4 s = vec4(0), c = vec4(0), sw = vec4(0), cw = vec4(0);
  [[unroll]] for (uint q = 0; q < 4; ++q) {  // unrolled: constant lane indices
    if (q < nfreq) {
      const uvec4 fs = freq_step[t0 + q];
      const float a = phase_angle(pc.offset + n0, fs.xy);
      s[q] = sin(a);
      c[q] = cos(a);
      sw[q] = uintBitsToFloat(fs.z);
      cw[q] = uintBitsToFloat(fs.w);
    }
  }
  const uint row0 = bi * pc.seq * d;
  [[unroll]] for (uint step = 0; step < BLOCK; ++step) {
    const uint n = n0 + step * blocks;
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
      if ((d & 1u) != 0 && k == 0) y[row0 + n * d + d - 1] = x[row0 + n * d + d - 1];
    }
    if (BLOCK > 1) phase_step(s, c, sw, cw);
  }
}

void main() {
  if (ONE_PASS) {
    if (gl_GlobalInvocationID.x < item_count()) sinusoidal_item(gl_GlobalInvocationID.x);
    return;
  }
  FOR_EACH_ITEM(item, item_count()) sinusoidal_item(item);
}
