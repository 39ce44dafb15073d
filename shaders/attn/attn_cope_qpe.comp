#version 450
// attn.cope pre-pass: qpe[r, t] = q_r . pos_emb[t] for every query row r of
// q [B*H*N, D] and position t < npos (f32 accumulation), so that a score's
// e = (1 - w) qpe[f] + w qpe[f + 1] costs two loads (naive and flash).
#include "common/storage.glsl"
#include "common/grid.glsl"

layout(constant_id = 1) const uint HEAD_DIM = 64;
layout(constant_id = 2) const bool VEC4 = true;  // HEAD_DIM % 4 == 0

layout(std430, binding = 0) readonly buffer Q { STORAGE_T q[]; };
layout(std430, binding = 0) readonly buffer Q4 { STORAGE_VEC4 q4[]; };
layout(std430, binding = 1) readonly buffer P { STORAGE_T pos_emb[]; };
layout(std430, binding = 1) readonly buffer P4 { STORAGE_VEC4 pos_emb4[]; };
layout(std430, binding = 2) writeonly buffer Qpe { float qpe[]; };  // [rows, npos]

layout(push_constant) uniform Push {
  uint rows;  // B*H*N
  uint npos;
} pc;

void main() {
  FOR_EACH_ITEM(item, pc.rows * pc.npos) {
    const uint r = item / pc.npos;
    const uint t = item - r * pc.npos;
    float acc = 0.0;
    if (VEC4) {
      for (uint c = 0; c < HEAD_DIM / 4; ++c) acc += dot(vec4(q4[r * (HEAD_DIM / 4) + c]), vec4(pos_emb4[t * (HEAD_DIM / 4) + c]));
    } else {
      for (uint d = 0; d < HEAD_DIM; ++d) acc += float(q[r * HEAD_DIM + d]) * float(pos_emb[t * HEAD_DIM + d]);
    }
    qpe[item] = acc;
  }
}
