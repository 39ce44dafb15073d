// The T5 relative bias as a score hook, shared by attn.t5's and attn.tupe's
// flash and naive score kernels: bias_table[bucket(j - i'), h], read as one
// float per score from rel_bias [H, M+N-1], which attn_t5_bias.comp fills
// with rel_buckets.glsl's exact t5_bucket (src/suites/attn/attn_t5.h). Per row
// slot the hook keeps where its row's distances start, so a score costs one
// load.
// The variant's extra binding 0. Define
// T5_BIAS_ONLY to get t5_row_state / t5_bias without the ATTN_* hooks.
#ifndef PEBENCH_ATTN_T5_HOOKS_GLSL
#define PEBENCH_ATTN_T5_HOOKS_GLSL

layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer RelBias { float rel_bias[]; };  // [H, M+N-1]

// rel_bias index of key 0 for each row slot: h (M+N-1) + (M-1) - i'.
uint t5_row_base[ATTN_ROW_SLOTS];

void t5_row_state(uint r, uint h, uint qpos) {
  t5_row_base[r] = h * (pc.kv_seq + pc.seq - 1) + (pc.kv_seq - 1) - qpos;
}
float t5_bias(uint r, uint kpos) { return rel_bias[ATTN_EXTRA_OFF(0, 4u) + t5_row_base[r] + kpos]; }

#ifdef PEBENCH_ATTN_FLASH_DECL_GLSL
// CPU kernel, staged MHA with full subgroups (TILE_SHUFFLE): lane l of a
// subgroup holds position p0 + l in every slot, so at key j it needs the bias
// lane l - 1 needed at key j - 1. The near keys (outside far ranges) come in
// order, so each slot keeps the current key's bias in t5_win and a key moves
// it up one lane; lane 0's comes from one read a key for all slots (lane r
// reads slot r's: t5_fresh_base). One storage-buffer read a key instead of
// one a slot, which llvmpipe runs lane by lane (docs/lavapipe.md).
// Lane r reads slot r's value, so the subgroup needs a lane per slot (arm64's
// 128-bit llvmpipe has 4 lanes for 8 slots: reads as before).
const bool T5_WINDOW = !DIRECT && TILE_SHUFFLE >= ROWS && GROUP == 1;
float t5_win[ROWS];
uint t5_fresh_base;

// Before the near keys [k0, ...): the window at key k0 - 1 (an index below
// the head's entries only in an idle slot, clamped to stay in the buffer).
void t5_near_begin(uint k0) {
  if (!T5_WINDOW) return;
  const uint lane = gl_SubgroupInvocationID;
  t5_fresh_base = 0;
  [[unroll]] for (uint r = 0; r < ROWS; ++r) {
    const uint b0 = subgroupShuffle(t5_row_base[r], 0);
    if (r == 0 || lane == r) t5_fresh_base = b0;
    t5_win[r] = rel_bias[ATTN_EXTRA_OFF(0, 4u) + uint(max(int(t5_row_base[r] + k0) - 1, 0))];
  }
}

void t5_near_key(uint kpos) {
  if (!T5_WINDOW) return;
  const uint lane = gl_SubgroupInvocationID;
  const float fresh = rel_bias[ATTN_EXTRA_OFF(0, 4u) + t5_fresh_base + kpos];
  [[unroll]] for (uint r = 0; r < ROWS; ++r) {
    const float up = subgroupShuffle(t5_win[r], max(lane, 1u) - 1u);
    const float f0 = subgroupShuffle(fresh, r);
    t5_win[r] = lane == 0 ? f0 : up;
  }
}
float t5_near_bias(uint r, uint kpos) { return T5_WINDOW ? t5_win[r] : t5_bias(r, kpos); }

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

#ifndef T5_BIAS_ONLY
#define ATTN_ROW_STATE(r, h, qpos) t5_row_state(r, h, qpos)
#ifdef PEBENCH_ATTN_FLASH_DECL_GLSL
#define ATTN_SCORE_TERM(r, h, qpos, kpos) t5_near_bias(r, kpos)
#define ATTN_NEAR_BEGIN(k0) t5_near_begin(k0)
#define ATTN_NEAR_KEY(kpos) t5_near_key(kpos)
#else
#define ATTN_SCORE_TERM(r, h, qpos, kpos) t5_bias(r, kpos)
#endif
#ifdef PEBENCH_ATTN_FLASH_DECL_GLSL
#define ATTN_FAR_BEGIN(side) t5_far_begin(side)
#define ATTN_FAR_SCORE_TERM(r, kpos) t5_far[r]
#endif
#endif

#endif
