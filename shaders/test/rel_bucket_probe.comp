// Test probe for common/rel_buckets.glsl: out[k] = bucket of rp_first + k in
// one mode, so tests compare every distance with the host
// (tests/rel_buckets_test.cc). Not a benchmark variant.
#version 450
#include "common/grid.glsl"

layout(std430, binding = 0) readonly buffer Thresholds { uint thresholds[]; };
layout(std430, binding = 1) writeonly buffer Buckets { int buckets[]; };

layout(push_constant) uniform Push {
  uint mode;         // 0: T5 bidirectional, 1: T5 unidirectional, 2: DeBERTa bucket, 3: DeBERTa idx
  int rp_first;      // the value probed by item 0 (rp for T5, delta for DeBERTa)
  uint items;
  uint buckets_param;  // num_buckets (T5) or position_buckets S (DeBERTa)
  uint count;          // DeBERTa: entries in the threshold list
} pc;

#define REL_BUCKET_THRESHOLD(i) thresholds[i]
#include "common/rel_buckets.glsl"

void main() {
  FOR_EACH_ITEM(k, pc.items) {
    const int v = pc.rp_first + int(k);
    int bucket;
    if (pc.mode == 0u) {
      bucket = int(t5_bucket(v, true, pc.buckets_param, 0u));
    } else if (pc.mode == 1u) {
      bucket = int(t5_bucket(v, false, pc.buckets_param, 0u));
    } else if (pc.mode == 2u) {
      bucket = deberta_log_bucket(v, pc.buckets_param >> 1, 0u, pc.count);
    } else {
      bucket = int(deberta_idx(v, pc.buckets_param, 0u, pc.count));
    }
    buckets[k] = bucket;
  }
}
