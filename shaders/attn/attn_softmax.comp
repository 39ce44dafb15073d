#version 450
// pebench-build: sinks ATTN_SINKS
// Naive attention, pass 2 of 3: each score row becomes its softmax in place.
// One invocation owns a row (no barriers, no shared memory): max, then
// exp(s - max) and its sum, then the division. Masked scores (ATTN_MASKED)
// get weight 0; a row with no visible key stays all zeros. The sinks build
// (sink_logits) adds exp(sinks[h] - m) to the denominator, m counting the
// sink (encodings.md "Masks and modifiers").
#include "common/grid.glsl"
#include "attn/attn_util.glsl"

layout(constant_id = 1) const bool VEC4 = true;  // kv_seq % 4 == 0

layout(std430, binding = 0) buffer Scores { float p[]; };  // [rows, M]
layout(std430, binding = 0) buffer Scores4 { vec4 p4[]; };

layout(push_constant) uniform Push {
  uint rows;    // rows in this pass (slices * N)
  uint kv_seq;  // M
  uint heads;   // H
  uint seq;     // N
  uint slice0;  // first (b, h) slice of this pass
} pc;

#ifdef ATTN_SINKS
layout(std430, binding = 1) readonly buffer Sinks { STORAGE_T sinks[]; };  // [H]
#endif

// The row's sink logit (ATTN_MASKED without sinks: weight 0).
float sink_logit(uint row) {
#ifdef ATTN_SINKS
  return float(sinks[(pc.slice0 + row / pc.seq) % pc.heads]);
#else
  return ATTN_MASKED;
#endif
}

void main() {
  FOR_EACH_ITEM(row, pc.rows) {
    const uint base = row * pc.kv_seq;
    const float sink = sink_logit(row);
    float m = sink;
    float l = 0.0;
    if (VEC4) {
      const uint b4 = base / 4, n4 = pc.kv_seq / 4;
      vec4 m4 = vec4(ATTN_MASKED);
      for (uint c = 0; c < n4; ++c) m4 = max(m4, p4[b4 + c]);
      m = max(m, max(max(m4.x, m4.y), max(m4.z, m4.w)));
      l = attn_weight(sink, m);
      for (uint c = 0; c < n4; ++c) {
        const vec4 w = attn_weight4(p4[b4 + c], vec4(m));
        p4[b4 + c] = w;
        l += w.x + w.y + w.z + w.w;
      }
      const float inv_l = l > 0.0 ? 1.0 / l : 0.0;
      for (uint c = 0; c < n4; ++c) p4[b4 + c] *= inv_l;
    } else {
      for (uint j = 0; j < pc.kv_seq; ++j) m = max(m, p[base + j]);
      l = attn_weight(sink, m);
      for (uint j = 0; j < pc.kv_seq; ++j) {
        const float w = attn_weight(p[base + j], m);
        p[base + j] = w;
        l += w;
      }
      const float inv_l = l > 0.0 ? 1.0 / l : 0.0;
      for (uint j = 0; j < pc.kv_seq; ++j) p[base + j] *= inv_l;
    }
  }
}
