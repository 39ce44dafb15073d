// attn.fire's hook, shared by the flash (CPU and GPU) and the naive score
// kernels: bias_h = w2[h].relu(w1 u + b1) + b2[h], u = ln(1 + c d) /
// (ln(1 + c max(i', L)) + eps), d = i' - j.
//
// For rows with i' < L the normaliser is ln(1 + c L) + eps whatever the row,
// so the bias depends on (h, d) only: attn_fire_table.comp runs the MLP once
// per (head, distance) into fire_table [H, M+N-1] (T5's layout), and in the
// GPU kernel and naive those rows read one float a score. Rows with i' >= L
// each have their own normaliser, so no two of them share a u: the MLP runs
// per score there (one log and 3W operations, W = FIRE_WIDTH unrolled), its
// weights from fire_mlp [w1 W | b1 W | w2 H W | b2 H] (attn_fire_pack.comp).
// The CPU kernel runs the MLP per score for every row, shares the log
// between the row slots along diagonals, and over runs of keys evaluates
// only the few hidden units whose ramps start inside the run's range of u
// (below, "Segments").
// Extra bindings 0 (fire_table) and 1 (fire_mlp, with the sorted ramps of
// attn_fire_sort.comp after the MLP in the CPU plan); push: fire_c, fire_L,
// eps.
#ifndef PEBENCH_ATTN_FIRE_HOOKS_GLSL
#define PEBENCH_ATTN_FIRE_HOOKS_GLSL

layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer FireTable { float fire_table[]; };  // [H, M+N-1]
layout(std430, binding = ATTN_EXTRA_BINDING(1)) readonly buffer FireMlp { float fire_mlp[]; };
layout(constant_id = 6) const uint FIRE_WIDTH = 32;  // mlp_width W

float fire_inv[ATTN_ROW_SLOTS];  // 1 / (ln(1 + c max(i', L)) + eps) of each row slot

float fire_w(uint i) { return fire_mlp[ATTN_EXTRA_OFF(1, 4u) + i]; }

#ifdef PEBENCH_ATTN_FLASH_DECL_GLSL
// CPU kernel: llvmpipe runs both sides of a branch that differs between
// lanes (a row slot's i' < L), and runs a storage-buffer load under a partial
// mask lane by lane: with the table behind such a branch and the MLP's 3W
// loads a score in front of it, FIRE ran 18x nope (N = M = 2048, L 512). So
// here every row runs the MLP per score (rows below L too: the same
// function), from weights each invocation loads once into private arrays,
// and no load runs in the key loop. The per-head weights are kept per slot
// head (ATTN_SLOT_HEADS: one where the workgroup's rows share a head), not
// per slot: with ROWS copies of w2 live across the key loop (8 x 32 floats
// at D 64) llvmpipe took ~30 s to compile each pipeline.
//
// Each hidden unit of the MLP of one scalar u is a ramp that starts at
// beta = -b1 / w1 (docs/attention-kernels.md, "KERPLE and FIRE"):
//   w1 > 0: w2 relu(w1 u + b1) = c max(u - beta, 0)                (c = w2 |w1|)
//   w1 < 0: w2 relu(w1 u + b1) = c max(u - beta, 0) - c u + w2 b1
//   w1 = 0: w2 relu(b1), a constant
// so bias = alpha u + gamma + sum_k c_k max(u - beta_k, 0): a subtract, a max
// with 0, a multiply and an add a unit per score instead of a multiply and an
// add more. llvmpipe fuses no multiply-add (GLSL's fma() included), and its
// max of two variables (max(u, beta)) adds a NaN test and a masked move, so
// the max stays against 0. alpha, gamma and c are per slot head; beta is the
// heads'. A unit whose |w1| is at most 1e-30 |b1| is taken as constant (its
// beta could overflow; w1 u moves it by at most 1e-30 of b1 for 0 <= u <= 1).
// ln(1 + c d) depends on the distance only, and the CPU kernel's staged MHA
// tiles hold consecutive rows in a subgroup's lanes, so the per-distance
// window of T5's table (near_window.glsl, T5's index j - i' + M - 1) carries
// it: a key runs one log for all row slots (lane r the one slot r's lane 0
// needs) instead of one a slot, and shuffles the rest across lanes. The value
// is the same float: d is an integer below 2^24 either way.
float fire_log_at(uint i) { return log(1.0 + pc.fire_c * float(int(pc.kv_seq - 1u) - int(i))); }
#define NEAR_TABLE(i) fire_log_at(i)
#include "attn/near_window.glsl"

float fire_beta[FIRE_WIDTH];
float fire_cw[ATTN_SLOT_HEADS * FIRE_WIDTH], fire_alpha[ATTN_SLOT_HEADS], fire_gamma[ATTN_SLOT_HEADS];

bool fire_flat(float w1, float b1) { return abs(w1) * 1e30 <= abs(b1); }

float fire_eval_slot(uint r, float u) {
  const uint e = r % ATTN_SLOT_HEADS;
  float acc = fire_alpha[e] * u + fire_gamma[e];
  [[unroll]] for (uint k = 0; k < FIRE_WIDTH; ++k) acc += fire_cw[e * FIRE_WIDTH + k] * max(u - fire_beta[k], 0.0);
  return acc;
}

void fire_row_state(uint r, uint h, uint qpos) {
  near_base[r] = (pc.kv_seq - 1u) - qpos;
  fire_inv[r] = 1.0 / (log(1.0 + pc.fire_c * float(max(qpos, pc.fire_L))) + pc.fire_eps);
  if (r == 0) {
    [[unroll]] for (uint k = 0; k < FIRE_WIDTH; ++k) {
      const float w1 = fire_w(k), b1 = fire_w(FIRE_WIDTH + k);
      fire_beta[k] = fire_flat(w1, b1) ? 0.0 : -b1 / w1;
    }
  }
  if (r < ATTN_SLOT_HEADS) {
    float alpha = 0.0, gamma = fire_w(2u * FIRE_WIDTH + pc.heads * FIRE_WIDTH + h);
    [[unroll]] for (uint k = 0; k < FIRE_WIDTH; ++k) {
      const float w1 = fire_w(k), b1 = fire_w(FIRE_WIDTH + k), w2 = fire_w(2u * FIRE_WIDTH + h * FIRE_WIDTH + k);
      const bool constant = fire_flat(w1, b1);
      const float c = constant ? 0.0 : w2 * abs(w1);
      gamma += constant ? w2 * max(b1, 0.0) : (w1 < 0.0 ? w2 * b1 : 0.0);
      alpha -= w1 < 0.0 ? c : 0.0;
      fire_cw[r * FIRE_WIDTH + k] = c;
    }
    fire_alpha[r] = alpha;
    fire_gamma[r] = gamma;
  }
}

float fire_bias(uint r, uint h, uint qpos, uint kpos) { return fire_eval_slot(r, near_entry(r, kpos) * fire_inv[r]); }

// Segments (docs/attention-kernels.md, "KERPLE and FIRE", "Segments"). u
// grows with the row's position and falls with the key's, so over the keys [s0, s1)
// that every row of the workgroup sees (positions p_lo .. p_hi) it stays in
// [u(p_lo, s1 - 1), u(p_hi, s0)]. A ramp that starts above that range is 0
// there, one that starts below it is linear there: only the ramps that
// start inside need their max. attn_fire_sort.comp sorts the ramps by beta
// and sums the linear parts (A, G); a segment's bias is then
//   A[p] u + G[p] + sum_{q < FIRE_WINDOW} c[p + q] max(u - beta[p + q], 0),
// FIRE_WINDOW ramps a score instead of W. flash_main.glsl's
// attn_fold_seen asks fire_segment for the next segment: the longest run
// of keys from s0 over which the ramps that start below u(p_hi, s0) are
// all on but the last FIRE_WINDOW. Where even one key spans more ramps
// (near the diagonal, or breakpoints packed closer than a key's range of
// u), one tile of keys folds the full MLP (fire_bias) instead.
// FIRE_WINDOW_MARGIN (in u) keeps the choice exact against the rounding
// of u: a ramp counts as on or off only at least that far from the range.
const uint FIRE_WINDOW = 4;  // FireBias::kFireWindow
const float FIRE_WINDOW_MARGIN = 1e-5;
float fire_win_beta[FIRE_WINDOW];
float fire_win_c[ATTN_SLOT_HEADS * FIRE_WINDOW], fire_win_a[ATTN_SLOT_HEADS], fire_win_g[ATTN_SLOT_HEADS];

uint fire_sorted_off() { return 2u * FIRE_WIDTH + pc.heads * FIRE_WIDTH + pc.heads; }
uint fire_head_off(uint h) {
  return fire_sorted_off() + FIRE_WIDTH + FIRE_WINDOW + h * (3u * FIRE_WIDTH + FIRE_WINDOW + 2u);
}
float fire_norm(uint qpos) { return log(1.0 + pc.fire_c * float(max(qpos, pc.fire_L))) + pc.fire_eps; }

// The window's ramps from sorted ramp p on, for every slot head.
void fire_window_load(uint p) {
  const uint sorted = fire_sorted_off();
  [[unroll]] for (uint q = 0; q < FIRE_WINDOW; ++q) fire_win_beta[q] = fire_w(sorted + p + q);
  [[unroll]] for (uint e = 0; e < ATTN_SLOT_HEADS; ++e) {
    const uint head = fire_head_off(attn_h[e]);
    [[unroll]] for (uint q = 0; q < FIRE_WINDOW; ++q) fire_win_c[e * FIRE_WINDOW + q] = fire_w(head + p + q);
    fire_win_a[e] = fire_w(head + FIRE_WIDTH + FIRE_WINDOW + p);
    fire_win_g[e] = fire_w(head + 2u * FIRE_WIDTH + FIRE_WINDOW + 1u + p);
  }
}

// The next segment of the keys [s0, s1max) every row sees (rows_qpos: the
// workgroup's smallest and largest position): [s0, x) with the window
// loaded, then [x, y) with the full MLP; one of the two is empty.
uvec2 fire_segment(uint s0, uint s1max, uvec2 rows_qpos) {
  const uint sorted = fire_sorted_off();
  const float u_hi = log(1.0 + pc.fire_c * float(rows_qpos.y - s0)) / fire_norm(rows_qpos.y) + FIRE_WINDOW_MARGIN;
  uint n = 0;  // ramps that start below u_hi
  [[dont_unroll]] for (uint k = 0; k < FIRE_WIDTH; ++k) n += fire_w(sorted + k) < u_hi ? 1u : 0u;
  const uint p = max(n, FIRE_WINDOW) - FIRE_WINDOW;
  uint s1 = s1max;
  if (p > 0) {
    // Ramp p - 1 is on at key j of row p_lo where u >= b:
    // ln(1 + c (p_lo - j)) >= b norm(p_lo), p_lo - j >= (exp(b norm) - 1) / c;
    // one key more for the rounding.
    const float b = fire_w(sorted + p - 1u) + FIRE_WINDOW_MARGIN;
    const float dmin = (exp(b * fire_norm(rows_qpos.x)) - 1.0) / pc.fire_c;
    const float last = float(rows_qpos.x) - ceil(dmin) - 1.0;  // the last key
    s1 = b <= 0.0 ? s1max : (last < float(s0) ? s0 : min(s1max, uint(last) + 1u));
  }
  fire_window_load(p);
  return s1 > s0 ? uvec2(s1, s1) : uvec2(s0, min(s1max, s0 + BC));
}

// A segment's bias (ATTN_FAR_SCORE_TERM: flash_main.glsl folds segments as
// far keys, with the near window kept: ATTN_NEAR_KEY_FAR).
float fire_window_bias(uint r, uint kpos) {
  const uint e = r % ATTN_SLOT_HEADS;
  const float u = near_entry(r, kpos) * fire_inv[r];
  float acc = fire_win_a[e] * u + fire_win_g[e];
  [[unroll]] for (uint q = 0; q < FIRE_WINDOW; ++q) {
    acc += fire_win_c[e * FIRE_WINDOW + q] * max(u - fire_win_beta[q], 0.0);
  }
  return acc;
}
#define ATTN_SEGMENT(s0, s1max, rows_qpos) fire_segment(s0, s1max, rows_qpos)
#define ATTN_FAR_SCORE_TERM(r, kpos) fire_window_bias(r, kpos)
#define ATTN_NEAR_KEY_FAR true
#define ATTN_VALUES_EARLY true
#define ATTN_FAR_BEGIN(side)  // no far ranges: the host leaves FAR_LEFT, FAR_RIGHT none
#else
// GPU kernel and naive: rows below L read the per-distance table, the rest
// run the MLP per score with the weights read from fire_mlp (cached).
#define NEAR_TABLE(i) fire_table[ATTN_EXTRA_OFF(0, 4u) + (i)]
#include "attn/near_window.glsl"

float fire_qf[ATTN_ROW_SLOTS];  // i' as a float (exact below 2^24)

// The MLP at u for head h, in the order attn_fire_table.comp uses.
float fire_eval(uint h, float u) {
  float acc = 0.0;
  [[unroll]] for (uint k = 0; k < FIRE_WIDTH; ++k) {
    acc += fire_w(2u * FIRE_WIDTH + h * FIRE_WIDTH + k) * max(fire_w(k) * u + fire_w(FIRE_WIDTH + k), 0.0);
  }
  return acc + fire_w(2u * FIRE_WIDTH + pc.heads * FIRE_WIDTH + h);
}

void fire_row_state(uint r, uint h, uint qpos) {
  near_base[r] = h * (pc.kv_seq + pc.seq - 1) + (pc.kv_seq - 1) - qpos;
  fire_qf[r] = float(qpos);
  fire_inv[r] = 1.0 / (log(1.0 + pc.fire_c * float(max(qpos, pc.fire_L))) + pc.fire_eps);
}

float fire_bias(uint r, uint h, uint qpos, uint kpos) {
  if (qpos < pc.fire_L) return near_read(r, kpos);
  const float u = log(1.0 + pc.fire_c * (fire_qf[r] - float(kpos))) * fire_inv[r];
  return fire_eval(h, u);
}
#endif

// A position-only bias: added after softcap (mask.glsl).
#define ATTN_TERM_IS_BIAS true
#define ATTN_ROW_STATE(r, h, qpos) fire_row_state(r, h, qpos)
#define ATTN_SCORE_TERM(r, h, qpos, kpos) fire_bias(r, h, qpos, kpos)

#endif
