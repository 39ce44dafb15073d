#version 450
// attn.cope, naive pass 1b: one invocation a score row walks its keys from
// the row's last (i' causal, M - 1 not) to the first, summing the gates
// sigmoid(s) of the content scores s = scale q.k the score pass wrote, and
// adds CoPE's e (times scale without cope_nodiv) in place, after capping s
// when softcap is on (the gates read the uncapped s, encodings.md); masked
// keys (after i' when causal) keep ATTN_MASKED.
#include "common/grid.glsl"
#include "attn/attn_util.glsl"

layout(std430, binding = 0) buffer Scores { float scores[]; };     // [slices, N, M]
layout(std430, binding = 1) readonly buffer Qpe { float qpe[]; };  // [B*H*N, npos]

layout(push_constant) uniform Push {
  ATTN_PUSH_SHAPE
  uint slice0;  // first (b, h) slice of this pass
  uint slices;
  uint npos;
  uint cope_nodiv;
  float softcap;  // > 0: the score pass left s uncapped; s = c tanh(s / c) + e here
} pc;

#define COPE_QPE(idx) qpe[idx]
#include "attn/cope_util.glsl"

void main() {
  const float cap = float(pc.npos - 1u);
  const float weight = pc.cope_nodiv != 0u ? 1.0 : pc.scale;
  FOR_EACH_ITEM(row, pc.slices * pc.seq) {
    const uint sl = row / pc.seq;
    const uint i = row - sl * pc.seq;
    const uint qpos = i + pc.kv_seq - pc.seq;
    const uint last = pc.causal != 0u ? qpos : pc.kv_seq - 1u;
    const uint base = row * pc.kv_seq;
    const uint qpe_base = ((pc.slice0 + sl) * pc.seq + i) * pc.npos;
    float sum = 0.0;
    for (uint n = 0; n <= last; ++n) {
      const uint j = last - n;
      const float s = scores[base + j];
      sum += cope_gate(s);
      float e;
      COPE_E(qpe_base, min(sum, cap), pc.npos, e);
      const float t = pc.softcap > 0.0 ? pc.softcap * tanh(clamp(s / pc.softcap, -15.0, 15.0)) : s;
      scores[base + j] = t + weight * e;
    }
  }
}
