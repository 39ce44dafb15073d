// attn.alibi's hook, shared by the flash and the naive score kernels: the
// bias -m_h |i' - j| (for visible keys of a causal mask |i' - j| = i' - j, so
// one form serves both). Slopes m_h come from the host (get_slopes(H) of
// Press et al.), one float per query head.
#ifndef PEBENCH_ATTN_ALIBI_HOOKS_GLSL
#define PEBENCH_ATTN_ALIBI_HOOKS_GLSL

layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer Slopes { float slopes[]; };  // [H]

float alibi_slope[ATTN_ROW_SLOTS];  // of each row slot's head

// Each row slot's position as a float, converted once per row: llvmpipe
// rebuilds attn_qpos[r] from its operands at every key, and the conversion
// with it (the CPU flash kernel ran 6-19% over nope that way, median 11%;
// 0-9%, median 3%, this way: docs/attention-kernels.md). Exact below 2^24,
// as is the difference of two such floats, so the bias is the same to the
// bit.
float alibi_qpos[ATTN_ROW_SLOTS];

float alibi_bias(uint r, uint qpos, uint kpos) {
  return -alibi_slope[r] * abs(alibi_qpos[r] - float(kpos));
}

void alibi_row_state(uint r, uint h, uint qpos) {
  alibi_slope[r] = slopes[ATTN_EXTRA_OFF(0, 4u) + h];
  alibi_qpos[r] = float(qpos);
}

#define ATTN_ROW_STATE(r, h, qpos) alibi_row_state(r, h, qpos)
#define ATTN_SCORE_TERM(r, h, qpos, kpos) alibi_bias(r, qpos, kpos)
#define ATTN_TERM_IS_BIAS true  // added after softcap (mask.glsl)

#endif
