#version 450
// attn.t5 / attn.tupe pre-pass: the T5 bias of every (head, distance),
// rel_bias[h, e] = bias_table[t5_bucket(rp), h] for rp = j - i' = e - (M - 1).
// The bucket is rel_buckets.glsl's exact integer one (the host's
// t5_thresholds list, no float log), so the kernels read one float per score
// and never evaluate a bucket.
#include "common/storage.glsl"
#include "common/grid.glsl"

layout(std430, binding = 0) readonly buffer BiasTable { STORAGE_T bias_table[]; };  // [nb, H]
layout(std430, binding = 1) readonly buffer Thresholds { uint thresholds[]; };      // t5_thresholds
layout(std430, binding = 2) writeonly buffer RelBias { float rel_bias[]; };         // [H, M+N-1]

layout(push_constant) uniform Push {
  uint heads;          // H
  uint distances;      // M + N - 1
  uint kv_seq;         // M
  uint num_buckets;    // nb
  uint bidirectional;  // 0 or 1
} pc;

#define REL_BUCKET_THRESHOLD(i) thresholds[i]
#include "common/rel_buckets.glsl"

void main() {
  FOR_EACH_ITEM(item, pc.heads * pc.distances) {
    const uint h = item / pc.distances;
    const uint e = item - h * pc.distances;
    const uint bucket = t5_bucket(int(e - (pc.kv_seq - 1u)), pc.bidirectional != 0u, pc.num_buckets, 0u);
    rel_bias[item] = float(bias_table[bucket * pc.heads + h]);
  }
}
