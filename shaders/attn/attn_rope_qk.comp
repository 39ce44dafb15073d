#version 450
// attn.rope, naive pre-pass: x [rows, D] rotated at position offset + (row %
// seq) into an f32 copy (q with offset M - N, k with offset 0), which the
// naive passes then attend over. Pairs per encodings.md section 2; dims
// >= rotary_dim are copied. M-RoPE (MROPE 1 chunked, 2 interleaved): pair
// t's position is component c(t) of pos_ids [3, pos_cols] at that column
// instead. xPos (XPOS): the pair also takes zeta_t^((p - c) xpos_rate)
// (the host negates the rate for k).
#include "common/storage.glsl"
#include "common/grid.glsl"
#include "common/phase.glsl"
#include "common/rope.glsl"

layout(constant_id = 1) const uint MROPE = 0;
layout(constant_id = 2) const bool XPOS = false;

layout(std430, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, binding = 1) readonly buffer Freq { uvec2 freq[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(std430, binding = 3) readonly buffer PosIds { int pos_ids[]; };  // M-RoPE: [3, pos_cols]

layout(push_constant) uniform Push {
  uint rows;
  uint seq;
  uint dim;
  uint rotary_dim;
  uint offset;
  uint neox;
  float attention_factor;
  uint pos_cols;
  uint mrope_s0, mrope_s1, mrope_s2;
  float xpos_rate;
  uint xpos_centre;
} pc;

void main() {
  const uint half_r = pc.rotary_dim / 2;
  const uint per_row = half_r + (pc.dim - pc.rotary_dim);
  FOR_EACH_ITEM(item, pc.rows * per_row) {
    const uint row = item / per_row;
    const uint j = item - row * per_row;
    const uint base = row * pc.dim;
    if (j >= half_r) {
      const uint d = pc.rotary_dim + j - half_r;
      y[base + d] = float(x[base + d]);
    } else {
      const uint i1 = base + (pc.neox != 0 ? j : 2 * j);
      const uint i2 = base + (pc.neox != 0 ? j + half_r : 2 * j + 1);
      const uint col = pc.offset + row % pc.seq;
      const uint p = MROPE != 0
          ? uint(pos_ids[mrope_component(j, MROPE == 2, pc.mrope_s0, pc.mrope_s1, pc.mrope_s2) * pc.pos_cols + col])
          : col;
      const float a = phase_angle(p, freq[j]);
      const float g = XPOS ? xpos_factor(j, pc.rotary_dim, float(int(col) - int(pc.xpos_centre)) * pc.xpos_rate) : 1.0;
      const vec2 r = rope_rotate(float(x[i1]), float(x[i2]), cos(a) * g, sin(a) * g, pc.attention_factor);
      y[i1] = r.x;
      y[i2] = r.y;
    }
  }
}
