#version 450
// rope.apply: y = x rotated at position p = offset + n (encodings.md section 2).
// x, y: [rows = B*H, N, D]. An item is one position n, one group of dims
// and a chunk of `rows_per_item` of the B*H rows; it computes its angles
// (sin and cos) once and applies them to that position in each row of its
// chunk: the angle depends on (n, t) only, and on lavapipe sin and cos cost
// many times a vec4 load, so sharing them across heads is what keeps this
// kernel near the speed of a copy. Chunks, not all B*H rows: rows lie N*D
// elements apart, often a power of two (1 MiB at N 2048, D 128), and an
// invocation striding through 32 of them ran at a third of the speed of 8
// (llvmpipe, H 32). The items of a position are first the rotations, then
// the pass-through dims [R, D).
// Angles come from the fixed-point frequency table (common/phase.glsl), so
// their error does not grow with p. With VEC4 every access is a vec4 (neox:
// 4 pairs (t..t+3, t+R/2..); gptj: 2 interleaved pairs), which is what
// lavapipe rewards (docs/lavapipe.md).
// M-RoPE (MROPE 1 chunked, 2 interleaved): frequency t's position is
// component c(t) of the token's column of pos_ids [3, N] instead of
// offset + n (offset then only set the scalings' L on the host). xPos
// (XPOS): each pair is also scaled by zeta_t^((p - c) xpos_rate), folded
// into its cos and sin. Both take BLOCK 1 (positions do not step by one,
// the factor changes with each).
// On CPU devices an item also covers BLOCK consecutive positions (8 on
// lavapipe): it evaluates its angles once, at the first, and steps to the
// next by rotating (cos, sin) by th'_t (`step`, from the host in double),
// as abs.sinusoidal does. The angles' table loads and phases, more than sin
// and cos, were their cost (docs/lavapipe.md). Each step rounds once (about
// 2^-24), far inside the 2^-11 Vulkan allows sin and cos; every item starts
// again from the exact fixed-point angle, so the error does not grow with
// p. BLOCK divides seq (the host sees to it). GPUs use BLOCK 1, and so do
// CPU devices where a position has more items than a subgroup (measured:
// docs/lavapipe.md).
#extension GL_EXT_control_flow_attributes : require
#include "common/storage.glsl"
#include "common/grid.glsl"
#include "common/phase.glsl"
#include "common/rope.glsl"

layout(constant_id = 1) const bool VEC4 = false;
layout(constant_id = 2) const uint BLOCK = 1;  // positions per item (unrolled)
layout(constant_id = 3) const uint MROPE = 0;  // 0 linear positions, 1 M-RoPE chunked, 2 interleaved
layout(constant_id = 4) const bool XPOS = false;

layout(std430, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, binding = 0) readonly buffer X4 { STORAGE_VEC4 x4[]; };
layout(std430, binding = 1) readonly buffer Freq { uvec2 freq[]; };  // th'_t as turn fractions, [R/2]
layout(std430, binding = 2) writeonly buffer Y { STORAGE_T y[]; };
layout(std430, binding = 2) writeonly buffer Y4 { STORAGE_VEC4 y4[]; };
// Binding 3 is `step` where BLOCK > 1 and pos_ids under M-RoPE (which
// takes BLOCK 1): four storage buffers, the Android baseline's limit
// (maxPerStageDescriptorStorageBuffers 4; Mobile.* tests).
layout(std430, binding = 3) readonly buffer Step { vec2 step_sincos[]; };  // (sin th'_t, cos th'_t), [R/2]
layout(std430, binding = 3) readonly buffer PosIds { int pos_ids[]; };  // M-RoPE: [3, N] (t, h, w), non-negative

layout(push_constant) uniform Push {
  uint rows;
  uint seq;
  uint dim;
  uint rotary_dim;
  uint offset;
  uint neox;
  float attention_factor;
  uint rows_per_item;
  uint mrope_s0, mrope_s1, mrope_s2;  // M-RoPE section
  float xpos_rate;                    // xPos: 1 / scale_base (q), -1 / scale_base (k)
  uint xpos_centre;                   // xPos: ceil(L / 2)
} pc;

// M-RoPE: the component (0 t, 1 h, 2 w) each lane's frequency t0 + q
// reads, from compares only (interleaved: t % 3 once per item, then
// counted on). The host's mrope_component, lane by lane.
uvec4 mrope_lanes(uint t0) {
  const uvec4 t = uvec4(t0) + uvec4(0, 1, 2, 3);
  if (MROPE == 1) {
    return uvec4(greaterThanEqual(t, uvec4(pc.mrope_s0))) + uvec4(greaterThanEqual(t, uvec4(pc.mrope_s0 + pc.mrope_s1)));
  }
  const uint m0 = t0 % 3;
  uvec4 m = uvec4(m0) + uvec4(0, 1, 2, 3);
  m = mix(m, m - 3, greaterThanEqual(m, uvec4(3)));  // m0 + q <= 5
  const bvec4 h = bvec4(uvec4(equal(m, uvec4(1))) & uvec4(lessThan(t, uvec4(3 * pc.mrope_s1))));
  const bvec4 w = bvec4(uvec4(equal(m, uvec4(2))) & uvec4(lessThan(t, uvec4(3 * pc.mrope_s2))));
  return mix(mix(uvec4(0), uvec4(1), h), uvec4(2), w);
}

// cos and sin at token n's position, and of one step, for frequencies t0 ..
// t0 + nf - 1 in lanes 0 .. nf - 1 (the rest 0); xPos's factor folded in.
// M-RoPE: the token's three position components are loaded once (not per
// lane) and each lane picks its own.
void angles(uint n, uint t0, uint nf, out vec4 c, out vec4 s, out vec4 cw, out vec4 sw) {
  c = vec4(0);
  s = vec4(0);
  cw = vec4(0);
  sw = vec4(0);
  uvec4 p = uvec4(pc.offset + n);
  if (MROPE != 0) {
    const uvec3 thw = uvec3(pos_ids[n], pos_ids[pc.seq + n], pos_ids[2 * pc.seq + n]);
    const uvec4 comp = mrope_lanes(t0);
    p = mix(mix(uvec4(thw.x), uvec4(thw.y), equal(comp, uvec4(1))), uvec4(thw.z), equal(comp, uvec4(2)));
  }
  [[unroll]] for (uint q = 0; q < 4; ++q) {  // unrolled: constant lane indices
    if (q < nf) {
      const uint t = t0 + q;
      const float a = phase_angle(p[q], freq[t]);
      const float g = XPOS ? xpos_factor(t, pc.rotary_dim, float(int(p[q]) - int(pc.xpos_centre)) * pc.xpos_rate) : 1.0;
      c[q] = cos(a) * g;
      s[q] = sin(a) * g;
      if (BLOCK > 1) {
        const vec2 w = step_sincos[t0 + q];
        sw[q] = w.x;
        cw[q] = w.y;
      }
    }
  }
}

void main() {
  const uint half_r = pc.rotary_dim / 2;
  const bool neox = pc.neox != 0;
  const uint rot_items = VEC4 ? (neox ? half_r / 4 : pc.rotary_dim / 4) : half_r;
  const uint pass_items = VEC4 ? (pc.dim - pc.rotary_dim) / 4 : pc.dim - pc.rotary_dim;
  const uint per_pos = rot_items + pass_items;
  const uint row_stride = pc.seq * pc.dim;  // elements from one (b, h) row to the next at the same n
  const float f = pc.attention_factor;
  const uint chunks = (pc.rows + pc.rows_per_item - 1) / pc.rows_per_item;
  const uint blocks = pc.seq / BLOCK;
  FOR_EACH_ITEM(item, chunks * blocks * per_pos) {
    const uint chunk = item / (blocks * per_pos);
    const uint in_chunk = item - chunk * (blocks * per_pos);
    const uint blk = in_chunk / per_pos;
    const uint j = in_chunk - blk * per_pos;
    const uint n0 = blk * BLOCK;
    const uint r0 = chunk * pc.rows_per_item;
    const uint r1 = min(r0 + pc.rows_per_item, pc.rows);
    if (j >= rot_items) {  // pass-through dims
      const uint k = j - rot_items;
      [[unroll]] for (uint step = 0; step < BLOCK; ++step) {
        const uint base = r0 * row_stride + (n0 + step) * pc.dim;
        if (VEC4) {
          for (uint r = r0, e = (base + pc.rotary_dim) / 4 + k; r < r1; ++r, e += row_stride / 4) y4[e] = x4[e];
        } else {
          for (uint r = r0, e = base + pc.rotary_dim + k; r < r1; ++r, e += row_stride) y[e] = x[e];
        }
      }
      continue;
    }
    // Frequencies of this item: neox vec4 4 (t .. t+3), gptj vec4 2, scalar 1.
    const uint nfreq = VEC4 ? (neox ? 4 : 2) : 1;
    const uint t0 = nfreq * j;
    vec4 c, s, cw, sw;
    angles(n0, t0, nfreq, c, s, cw, sw);
    [[unroll]] for (uint step = 0; step < BLOCK; ++step) {
      const uint base = r0 * row_stride + (n0 + step) * pc.dim;
      if (VEC4 && neox) {
        for (uint r = r0, e1 = (base + t0) / 4, e2 = (base + t0 + half_r) / 4; r < r1;
             ++r, e1 += row_stride / 4, e2 += row_stride / 4) {
          vec4 y1, y2;
          rope_rotate4(vec4(x4[e1]), vec4(x4[e2]), c, s, f, y1, y2);
          y4[e1] = STORAGE_VEC4(y1);
          y4[e2] = STORAGE_VEC4(y2);
        }
      } else if (VEC4) {  // gptj: (2t, 2t+1) and (2t+2, 2t+3)
        for (uint r = r0, e = base / 4 + j; r < r1; ++r, e += row_stride / 4) {
          const vec4 v = vec4(x4[e]);
          y4[e] = STORAGE_VEC4(vec4(rope_rotate(v.x, v.y, c.x, s.x, f), rope_rotate(v.z, v.w, c.y, s.y, f)));
        }
      } else {
        const uint o1 = base + (neox ? j : 2 * j);
        const uint o2 = base + (neox ? j + half_r : 2 * j + 1);
        for (uint r = r0, i1 = o1, i2 = o2; r < r1; ++r, i1 += row_stride, i2 += row_stride) {
          const vec2 v = rope_rotate(float(x[i1]), float(x[i2]), c.x, s.x, f);
          y[i1] = STORAGE_T(v.x);
          y[i2] = STORAGE_T(v.y);
        }
      }
      if (BLOCK > 1) phase_step(s, c, sw, cw);
    }
  }
}
