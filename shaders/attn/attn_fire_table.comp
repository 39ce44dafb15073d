#version 450
// attn.fire pre-pass 2: the MLP once per (head, distance) for the rows with
// i' < L (normaliser ln(1 + c L) + eps, the same for all of them):
// fire_table[h, e] for d = i' - j = (M - 1) - e (T5's layout), in the order
// fire_hooks.glsl's per-score MLP uses. Entries with d < 0 are 0 (attn.fire
// is causal only). H (M+N-1) MLPs instead of one per score of those rows.
#extension GL_EXT_control_flow_attributes : require
#include "common/grid.glsl"

layout(std430, binding = 0) readonly buffer Mlp { float mlp[]; };             // [w1 W | b1 W | w2 H W | b2 H]
layout(std430, binding = 1) writeonly buffer FireTable { float table[]; };  // [H, M+N-1]
layout(constant_id = 1) const uint FIRE_WIDTH = 32;

layout(push_constant) uniform Push {
  uint heads;      // H
  uint distances;  // M + N - 1
  uint kv_seq;     // M
  float fire_c;
  uint fire_L;
  float fire_eps;
} pc;

void main() {
  const float inv = 1.0 / (log(1.0 + pc.fire_c * float(pc.fire_L)) + pc.fire_eps);
  FOR_EACH_ITEM(item, pc.heads * pc.distances) {
    const uint h = item / pc.distances;
    const uint e = item - h * pc.distances;
    const int d = int(pc.kv_seq - 1u) - int(e);
    float b = 0.0;
    if (d >= 0) {
      const float u = log(1.0 + pc.fire_c * float(d)) * inv;
      float acc = 0.0;
      [[unroll]] for (uint k = 0; k < FIRE_WIDTH; ++k) {
        acc += mlp[2u * FIRE_WIDTH + h * FIRE_WIDTH + k] * max(mlp[k] * u + mlp[FIRE_WIDTH + k], 0.0);
      }
      b = acc + mlp[2u * FIRE_WIDTH + pc.heads * FIRE_WIDTH + h];
    }
    table[item] = b;
  }
}
