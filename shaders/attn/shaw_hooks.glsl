// attn.shaw's hooks (Shaw et al., encodings.md section 3): with
// idx = clip(j - i', -K, K) + K, s = scale (q.k + q.rel_k[idx]) and
// o = sum_j p_ij (v_j + rel_v[idx]); rel_k and rel_v [2K+1, D] are shared by
// the heads. Both terms depend on the pair only through idx, so the flash
// kernel works per distance, not per pair:
//   score: scale q.rel_k[idx] for each row slot and each idx the
//     invocation's keys reach (all 2K+1 in prefill; in a decode split far
//     from the query only idx 0), computed before the keys (ATTN_KEYS_BEGIN;
//     each rel_k row read once for all the slots) into a table; a pair costs
//     one table read.
//   value: sum_j p_ij rel_v[idx] = sum_idx W_idx rel_v[idx], W_idx the weight
//     of the keys with that idx. Keys with idx 0 (j - i' <= -K) and 2K
//     (j - i' >= K) are summed into two numbers rescaled like the running sum
//     l; every 0 < idx < 2K belongs to exactly one key (j = i' + idx - K), so
//     its score is kept and weighted exp(s - m) with the final max m
//     (ATTN_KEY_FOLDED). After the keys rel_v is applied once per idx and
//     slot (ATTN_ROWS_FINISH: at most 2K+1 D-vectors per row instead of one
//     per pair).
// Per (slot, key): one table read and one conditional table write; per
// invocation: two rolled loops of at most 2K+1 rows (flash_hook_loops). The
// tables are ROWS x (2K+1) floats per invocation, hence the host's cap on
// max_rel for flash. Naive: the score in one loop over D (ATTN_SCORE), the
// value term in the P.V pass (attn_pv_shaw.comp).
#ifndef PEBENCH_ATTN_SHAW_HOOKS_GLSL
#define PEBENCH_ATTN_SHAW_HOOKS_GLSL

layout(constant_id = 6) const uint SHAW_K = 16;  // max_rel
const uint SHAW_NREL = 2 * SHAW_K + 1;

layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer RelK { STORAGE_T rel_k[]; };
layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer RelKV { STORAGE_VEC4 rel_k4[]; };

// clip(kpos - qpos, -K, K) + K
uint shaw_idx(uint qpos, uint kpos) {
  return uint(clamp(int(kpos) - int(qpos), -int(SHAW_K), int(SHAW_K)) + int(SHAW_K));
}

#ifdef PEBENCH_ATTN_FLASH_DECL_GLSL

layout(std430, binding = ATTN_EXTRA_BINDING(1)) readonly buffer RelV { STORAGE_T rel_v[]; };
layout(std430, binding = ATTN_EXTRA_BINDING(1)) readonly buffer RelVV { STORAGE_VEC4 rel_v4[]; };

float shaw_qrk[ROWS * SHAW_NREL];   // scale q.rel_k[idx] of slot r at [r * SHAW_NREL + idx]
float shaw_band[ROWS * SHAW_NREL];  // score of the key at 0 < idx < 2K; ATTN_MASKED: not folded here
float shaw_w_lo[ROWS], shaw_w_hi[ROWS];  // weights of the keys at idx 0 / 2K, under attn_m
// The idx this invocation's keys reach in any slot: [shaw_x_lo, shaw_x_hi]
// (a decode split far from the query: idx 0 only). Tables outside it are
// neither written nor read.
int shaw_x_lo, shaw_x_hi;

// Before the keys [kb, ke): the idx range they reach and q.rel_k over it
// (each rel_k row read once for every slot). With shuffled row reads
// (ATTN_LOAD_SHARED_ROW: 2 reads a row instead of 16 at D 64) the range is
// the workgroup's, the same in every lane, since the loops over it hold
// shuffles; a lane's entries its rows do not reach are computed and never
// read (band: ATTN_MASKED, weight 0).
void shaw_keys_begin(uint kb, uint ke) {
  int q_lo = int(attn_qpos[0]), q_hi = q_lo;
  if (ATTN_SHARED_ROW_SHUFFLE) {
    const ivec2 pos = attn_wg_positions(GROUP * pc.seq, GROUP);
    q_lo = pos.x;
    q_hi = pos.y;
  } else {
    [[unroll]] for (uint r = 1; r < ROWS; ++r) {
      q_lo = min(q_lo, int(attn_qpos[r]));
      q_hi = max(q_hi, int(attn_qpos[r]));
    }
  }
  const int kk = int(SHAW_K);
  shaw_x_lo = clamp(int(kb) - q_hi, -kk, kk) + kk;
  shaw_x_hi = ke > kb ? clamp(int(ke) - 1 - q_lo, -kk, kk) + kk : shaw_x_lo - 1;
  for (int x = shaw_x_lo; x <= shaw_x_hi; ++x) {
    vec4 rk[D4P];
    ATTN_LOAD_SHARED_ROW(rk, rel_k, rel_k4, ATTN_EXTRA_OFF_S(0) + uint(x) * HEAD_DIM);
    [[unroll]] for (uint r = 0; r < ROWS; ++r) {
      float d = 0.0;
      [[unroll]] for (uint c = 0; c < D4P; ++c) d += dot(attn_q[r * QW + c], rk[c]);
      shaw_qrk[r * SHAW_NREL + uint(x)] = pc.scale * d;
      shaw_band[r * SHAW_NREL + uint(x)] = ATTN_MASKED;
    }
  }
  [[unroll]] for (uint r = 0; r < ROWS; ++r) {
    shaw_w_lo[r] = 0.0;
    shaw_w_hi[r] = 0.0;
  }
}

// After the online-softmax step of (slot r, key kpos). The two classes at
// the ends are disjoint even for K = 0 (where idx 0 = 2K).
void shaw_key_folded(uint r, uint kpos, float s, float w, float alpha) {
  const int d = int(kpos) - int(attn_qpos[r]), kk = int(SHAW_K);
  shaw_w_lo[r] = shaw_w_lo[r] * alpha + (d <= -kk ? w : 0.0);
  shaw_w_hi[r] = shaw_w_hi[r] * alpha + (d > -kk && d >= kk ? w : 0.0);
  if (d > -kk && d < kk) shaw_band[r * SHAW_NREL + uint(d + kk)] = s;
}

// acc += sum_idx W_idx rel_v[idx], W relative to the final running max.
void shaw_rows_finish() {
  for (int x = shaw_x_lo; x <= shaw_x_hi; ++x) {
    vec4 rv[D4P];
    ATTN_LOAD_SHARED_ROW(rv, rel_v, rel_v4, ATTN_EXTRA_OFF_S(1) + uint(x) * HEAD_DIM);
    [[unroll]] for (uint r = 0; r < ROWS; ++r) {
      float wx = (x == 0 ? shaw_w_lo[r] : 0.0) + (x == 2 * int(SHAW_K) ? shaw_w_hi[r] : 0.0);
      if (x > 0 && x < 2 * int(SHAW_K)) wx = attn_weight(shaw_band[r * SHAW_NREL + uint(x)], attn_m[r]);
      [[unroll]] for (uint c = 0; c < D4P; ++c) attn_acc[r * QW + c] += wx * rv[c];
    }
  }
}

#define ATTN_KEYS_BEGIN(kb, ke) shaw_keys_begin(kb, ke)
// Keys at least K away (all but 2K - 1 of a row's keys) read the table's end
// entries at fixed indices; only the band reads an index that differs
// between lanes, which llvmpipe turns into one load per lane.
float shaw_score_term(uint r, uint qpos, uint kpos) {
  const int d = int(kpos) - int(qpos), kk = int(SHAW_K);
  float t;
  if (d <= -kk) {
    t = shaw_qrk[r * SHAW_NREL];
  } else if (d >= kk) {
    t = shaw_qrk[r * SHAW_NREL + 2 * SHAW_K];
  } else {
    t = shaw_qrk[r * SHAW_NREL + uint(d + kk)];
  }
  return t;
}
#define ATTN_SCORE_TERM(r, h, qpos, kpos) shaw_score_term(r, qpos, kpos)
// Keys K or more before (side 0) or after (side 1) every row of the
// workgroup (ShawRelative::flash_cpu_far) all have the clipped end's idx:
// their score term is its q.rel_k, and their weights go to that end's sum
// once, after the range. The range's weight is what the running sum l
// gained over it (l minus its value before, rescaled to the new max), so
// a key of a far range costs Shaw nothing (+7.8% over nope against +9.7%
// with a per-key update: docs/attention-kernels.md).
float shaw_far_qrk[ROWS], shaw_far_l0[ROWS], shaw_far_m0[ROWS];
void shaw_far_begin(uint side) {
  [[unroll]] for (uint r = 0; r < ROWS; ++r) {
    shaw_far_qrk[r] = shaw_qrk[r * SHAW_NREL + (side == 0 ? 0 : 2 * SHAW_K)];
    shaw_far_l0[r] = attn_l[r];
    shaw_far_m0[r] = attn_m[r];
  }
}
void shaw_far_end(uint side) {
  [[unroll]] for (uint r = 0; r < ROWS; ++r) {
    const float e = exp(shaw_far_m0[r] - attn_m[r]);  // 1 if no key was visible: both ATTN_MASKED
    const float w = max(attn_l[r] - shaw_far_l0[r] * e, 0.0);
    shaw_w_lo[r] = shaw_w_lo[r] * e + (side == 0 ? w : 0.0);
    shaw_w_hi[r] = shaw_w_hi[r] * e + (side == 0 ? 0.0 : w);
  }
}
// far: a constant after inlining.
void shaw_key_folded_in(uint r, uint kpos, float s, float w, float alpha, const bool far) {
  if (!far) shaw_key_folded(r, kpos, s, w, alpha);
}
#define ATTN_FAR_BEGIN(side) shaw_far_begin(side)
#define ATTN_FAR_END(side) shaw_far_end(side)
#define ATTN_FAR_SCORE_TERM(r, kpos) shaw_far_qrk[r]
#define ATTN_KEY_FOLDED(r, kpos, s, w, alpha, far) shaw_key_folded_in(r, kpos, s, w, alpha, far)
#define ATTN_ROWS_FINISH() shaw_rows_finish()

#elif defined(PEBENCH_ATTN_FLASH_GPU_GLSL)

layout(std430, binding = ATTN_EXTRA_BINDING(1)) readonly buffer RelV { STORAGE_T rel_v[]; };
layout(std430, binding = ATTN_EXTRA_BINDING(1)) readonly buffer RelVV { STORAGE_VEC4 rel_v4[]; };

// GPU kernel: per key, the lane's share of scale q.rel_k[idx] joins its
// partial dot (no reduction of its own) and rel_v[idx] is weighted like v;
// the 2K+1 rows of each table stay in the cache, and no per-distance
// tables take registers.
float shaw_partial(uint kpos, uint t, uint c) {
  return dot(gpu_q[t], ATTN_LOAD_CHUNK(rel_k, rel_k4, ATTN_EXTRA_OFF_S(0) + shaw_idx(gpu_qpos, kpos) * HEAD_DIM, c));
}
vec4 shaw_value(uint kpos, uint c) {
  return ATTN_LOAD_CHUNK(rel_v, rel_v4, ATTN_EXTRA_OFF_S(1) + shaw_idx(gpu_qpos, kpos) * HEAD_DIM, c);
}
#define GPU_PARTIAL(kpos, t, c, kc) shaw_partial(kpos, t, c)
#define GPU_VALUE_TERM(kpos, c) shaw_value(kpos, c)

#else  // naive score pass

// scale (q.k + q.rel_k[idx]), one loop over D.
float shaw_score(uint qpos, uint kpos, uint q_base, uint k_base) {
  const uint r_base = shaw_idx(qpos, kpos) * HEAD_DIM;
  float acc = 0.0;
  if (VEC4) {
    for (uint c = 0; c < HEAD_DIM / 4; ++c) {
      const vec4 qc = vec4(q4[q_base / 4 + c]);
      acc += dot(qc, vec4(k4[k_base / 4 + c])) + dot(qc, vec4(rel_k4[(ATTN_EXTRA_OFF_S(0) + r_base) / 4 + c]));
    }
  } else {
    for (uint d = 0; d < HEAD_DIM; ++d) {
      const float qd = float(q[q_base + d]);
      acc += qd * float(k[k_base + d]) + qd * float(rel_k[ATTN_EXTRA_OFF_S(0) + r_base + d]);
    }
  }
  return pc.scale * acc;
}

#define ATTN_SCORE(h, qpos, kpos, q_base, k_base) shaw_score(qpos, kpos, q_base, k_base)

#endif

#endif
