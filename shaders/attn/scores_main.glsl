// Naive attention, pass 1 of 3, part 2 of 2: the kernel (see scores_decl.glsl).
// One item per score: the dot product reads q and k rows from memory
// (vec4 when HEAD_DIM % 4 == 0), as a straightforward kernel would.
#ifndef PEBENCH_ATTN_SCORES_MAIN_GLSL
#define PEBENCH_ATTN_SCORES_MAIN_GLSL

#include "attn/hook_defaults.glsl"

void main() {
  const uint group = pc.heads / pc.kv_heads;
  const uint per_slice = pc.seq * pc.kv_seq;
  FOR_EACH_ITEM(item, pc.slices * per_slice) {
    const uint sl = item / per_slice;
    const uint rem = item - sl * per_slice;
    const uint i = rem / pc.kv_seq;
    const uint j = rem - i * pc.kv_seq;
    const uint slice = pc.slice0 + sl;
    const uint b = slice / pc.heads, h = slice % pc.heads;
    const uint qpos = i + pc.kv_seq - pc.seq;
    float s = ATTN_MASKED;
    if (attn_mask_visible(qpos, j)) {
      attn_q_base = (slice * pc.seq + i) * HEAD_DIM;
      const uint k_base = ((b * pc.kv_heads + h / group) * pc.kv_seq + j) * HEAD_DIM;
#ifdef ATTN_SCORE
      s = ATTN_SCORE(h, qpos, j, attn_q_base, k_base);
#else
      float acc = 0.0;
      if (VEC4) {
        for (uint c = 0; c < HEAD_DIM / 4; ++c) acc += dot(vec4(q4[attn_q_base / 4 + c]), vec4(k4[k_base / 4 + c]));
      } else {
        for (uint d = 0; d < HEAD_DIM; ++d) acc += float(q[attn_q_base + d]) * float(k[k_base + d]);
      }
      s = pc.scale * acc;
#endif
      ATTN_ROW_STATE(0, h, qpos);
#ifdef ATTN_CONTENT_TERM
      s += ATTN_CONTENT_TERM(0, h, qpos, j);
#endif
#ifdef ATTN_SCORE_TERM
      s = ATTN_MODIFIED_SCORE(s, ATTN_SCORE_TERM(0, h, qpos, j));
#else
      s = attn_softcap(s);
#endif
    }
    scores[ATTN_SCORES_OFF + item] = s;
  }
}

#endif
