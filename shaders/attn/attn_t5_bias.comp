#version 450
// attn.t5 / attn.tupe pre-pass: the T5 bias of every (head, distance),
// rel_bias[h, e] = bias_table[bucket[e], h] for rp = j - i' = e - (M - 1).
// The buckets are the host's exact table (rel_buckets.h: t5_bucket_table),
// so the kernels read one float per score and never evaluate a bucket.
#include "common/storage.glsl"
#include "common/grid.glsl"

layout(std430, binding = 0) readonly buffer BiasTable { STORAGE_T bias_table[]; };  // [nb, H]
layout(std430, binding = 1) readonly buffer Buckets { int buckets[]; };             // [M+N-1]
layout(std430, binding = 2) writeonly buffer RelBias { float rel_bias[]; };         // [H, M+N-1]

layout(push_constant) uniform Push {
  uint heads;   // H
  uint distances;  // M + N - 1
} pc;

void main() {
  FOR_EACH_ITEM(item, pc.heads * pc.distances) {
    const uint h = item / pc.distances;
    const uint e = item - h * pc.distances;
    rel_bias[item] = float(bias_table[uint(buckets[e]) * pc.heads + h]);
  }
}
