#version 450
// attn.kerple pre-pass: KERPLE's bias of every (head, distance),
// rel_bias[h, e] for d = i' - j = (M - 1) - e (T5's layout):
//   kind 0 (log):   -r1[h] ln(1 + r2[h] d)
//   kind 1 (power): -r1[h] d^r2[h], with 0^r2 = 0 (d = 0 is never exp(r2 ln 0))
// Entries of keys after the query (d < 0) are 0: attn.kerple is causal only,
// so the kernels never add them to a visible score. Evaluated H (M+N-1)
// times instead of once per score (H N M / 2): the flash and naive kernels
// read one float per score.
#include "common/grid.glsl"

layout(std430, binding = 0) readonly buffer R1 { float r1[]; };              // [H]
layout(std430, binding = 1) readonly buffer R2 { float r2[]; };              // [H]
layout(std430, binding = 2) writeonly buffer RelBias { float rel_bias[]; };  // [H, M+N-1]

layout(push_constant) uniform Push {
  uint heads;      // H
  uint distances;  // M + N - 1
  uint kv_seq;     // M
  uint kind;       // 0 log, 1 power
} pc;

void main() {
  FOR_EACH_ITEM(item, pc.heads * pc.distances) {
    const uint h = item / pc.distances;
    const uint e = item - h * pc.distances;
    const int d = int(pc.kv_seq - 1u) - int(e);
    float b = 0.0;
    if (d > 0) {
      const float fd = float(d);  // exact below 2^24 (resolve() rejects more keys)
      b = pc.kind == 0u ? -r1[h] * log(1.0 + r2[h] * fd) : -r1[h] * exp2(r2[h] * log2(fd));
    }
    rel_bias[item] = b;
  }
}
