// The T5 relative bias as a score hook, shared by attn.t5's and attn.tupe's
// flash and naive score kernels: bias_table[bucket(j - i'), h], read as one
// float per score from rel_bias [H, M+N-1], which attn_t5_bias.comp fills
// with rel_buckets.glsl's exact t5_bucket (src/suites/attn/attn_t5.h). Per row
// slot the hook keeps where its row's distances start, so a score costs one
// load.
// The variant's extra binding 0. Define T5_BIAS_ONLY to get t5_row_state /
// t5_bias without the ATTN_* hooks other than the near window's.
#ifndef PEBENCH_ATTN_T5_HOOKS_GLSL
#define PEBENCH_ATTN_T5_HOOKS_GLSL

layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer RelBias { float rel_bias[]; };  // [H, M+N-1]

// rel_bias index of key 0 for each row slot, h (M+N-1) + (M-1) - i', is the
// near window's near_base (near_window.glsl: the CPU kernel's band reads
// rel_bias once a key for all slots).
#define NEAR_TABLE(i) rel_bias[ATTN_EXTRA_OFF(0, 4u) + (i)]
#include "attn/near_window.glsl"

void t5_row_state(uint r, uint h, uint qpos) {
  near_base[r] = h * (pc.kv_seq + pc.seq - 1) + (pc.kv_seq - 1) - qpos;
}
float t5_bias(uint r, uint kpos) { return near_read(r, kpos); }

#ifdef PEBENCH_ATTN_FLASH_DECL_GLSL
// CPU kernel: from FAR_LEFT before the row and FAR_RIGHT after it on, every
// distance falls in T5's last bucket of its side (T5Bias::flash_cpu_far), so
// a far range's bias is one value per row slot, read at that distance
// (clamped into rel_bias's distances: a row with no key that far has no far
// range either).
float t5_far[ROWS];
void t5_far_begin(uint side) {
  [[unroll]] for (uint r = 0; r < ROWS; ++r) {
    const int j = side == 0 ? int(attn_qpos[r]) - int(FAR_LEFT) : int(attn_qpos[r]) + int(FAR_RIGHT);
    t5_far[r] = t5_bias(r, uint(clamp(j, 0, int(pc.kv_seq) - 1)));
  }
}
#endif

// T5's and TUPE's table is a position-only bias: added after softcap (mask.glsl).
#define ATTN_TERM_IS_BIAS true

#ifndef T5_BIAS_ONLY
#define ATTN_ROW_STATE(r, h, qpos) t5_row_state(r, h, qpos)
#define ATTN_SCORE_TERM(r, h, qpos, kpos) near_entry(r, kpos)
#ifdef PEBENCH_ATTN_FLASH_DECL_GLSL
#define ATTN_FAR_BEGIN(side) t5_far_begin(side)
#define ATTN_FAR_SCORE_TERM(r, kpos) t5_far[r]
#endif
#endif

#endif
