#version 450
// attn.deberta pre-pass: the kr/qr row of every distance,
//   deberta_idx[e] = deberta_idx(delta = i' - j = (M - 1) - e)
// (the layout of the host's deberta_idx_table), with rel_buckets.glsl's
// exact integer function over the host's threshold list (count = S - S/2,
// exact at every delta; no float log). The kernels then read one int per
// score and never evaluate a bucket (deberta_hooks.glsl).
#include "common/grid.glsl"

layout(std430, binding = 0) readonly buffer Thresholds { uint thresholds[]; };  // deberta_log_thresholds
layout(std430, binding = 1) writeonly buffer Idx { int idx[]; };                // [M+N-1]

layout(push_constant) uniform Push {
  uint distances;    // M + N - 1
  uint kv_seq;       // M
  uint bucket_size;  // S
  uint count;        // entries in thresholds
} pc;

#define REL_BUCKET_THRESHOLD(i) thresholds[i]
#include "common/rel_buckets.glsl"

void main() {
  FOR_EACH_ITEM(e, pc.distances) {
    idx[e] = int(deberta_idx(int((pc.kv_seq - 1u) - e), pc.bucket_size, 0u, pc.count));
  }
}
