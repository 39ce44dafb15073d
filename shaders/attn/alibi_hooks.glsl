// attn.alibi's hook, shared by the flash and the naive score kernels: the
// bias -m_h |i' - j| (for visible keys of a causal mask |i' - j| = i' - j, so
// one form serves both). Slopes m_h come from the host (get_slopes(H) of
// Press et al.), one float per query head.
#ifndef PEBENCH_ATTN_ALIBI_HOOKS_GLSL
#define PEBENCH_ATTN_ALIBI_HOOKS_GLSL

layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer Slopes { float slopes[]; };  // [H]

float alibi_slope[ATTN_ROW_SLOTS];  // of each row slot's head

float alibi_bias(uint r, uint qpos, uint kpos) {
  return -alibi_slope[r] * abs(float(int(qpos) - int(kpos)));
}

#define ATTN_ROW_STATE(r, h, qpos) alibi_slope[r] = slopes[ATTN_EXTRA_OFF(0, 4u) + h]
#define ATTN_SCORE_TERM(r, h, qpos, kpos) alibi_bias(r, qpos, kpos)

#endif
