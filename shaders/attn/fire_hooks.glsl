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
// The CPU kernel runs the MLP per score for every row (below).
// Extra bindings 0 (fire_table) and 1 (fire_mlp); push: fire_c, fire_L, eps.
#ifndef PEBENCH_ATTN_FIRE_HOOKS_GLSL
#define PEBENCH_ATTN_FIRE_HOOKS_GLSL

layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer FireTable { float fire_table[]; };  // [H, M+N-1]
layout(std430, binding = ATTN_EXTRA_BINDING(1)) readonly buffer FireMlp { float fire_mlp[]; };
layout(constant_id = 6) const uint FIRE_WIDTH = 32;  // mlp_width W

float fire_inv[ATTN_ROW_SLOTS];  // 1 / (ln(1 + c max(i', L)) + eps) of each row slot
float fire_qf[ATTN_ROW_SLOTS];   // i' as a float (exact below 2^24)

float fire_w(uint i) { return fire_mlp[ATTN_EXTRA_OFF(1, 4u) + i]; }

#ifdef PEBENCH_ATTN_FLASH_DECL_GLSL
// CPU kernel: llvmpipe runs both sides of a branch that differs between
// lanes (a row slot's i' < L), and runs a storage-buffer load under a partial
// mask lane by lane: with the table behind such a branch and the MLP's 3W
// loads a score in front of it, FIRE ran 18x nope (N = M = 2048, L 512). So
// here every row runs the MLP per score (rows below L too: the same
// function), from weights each invocation loads once into private arrays,
// and no load runs in the key loop. w2 and b2 are kept per slot head
// (ATTN_SLOT_HEADS: one where the workgroup's rows share a head), not per
// slot: with ROWS copies of w2 live across the key loop (8 x 32 floats at
// D 64) llvmpipe took ~30 s to compile each pipeline.
float fire_w1[FIRE_WIDTH], fire_b1[FIRE_WIDTH];
float fire_w2[ATTN_SLOT_HEADS * FIRE_WIDTH], fire_b2[ATTN_SLOT_HEADS];

float fire_eval_slot(uint r, float u) {
  const uint e = r % ATTN_SLOT_HEADS;
  float acc = 0.0;
  [[unroll]] for (uint k = 0; k < FIRE_WIDTH; ++k) acc += fire_w2[e * FIRE_WIDTH + k] * max(fire_w1[k] * u + fire_b1[k], 0.0);
  return acc + fire_b2[e];
}

void fire_row_state(uint r, uint h, uint qpos) {
  fire_qf[r] = float(qpos);
  fire_inv[r] = 1.0 / (log(1.0 + pc.fire_c * float(max(qpos, pc.fire_L))) + pc.fire_eps);
  if (r == 0) {
    [[unroll]] for (uint k = 0; k < FIRE_WIDTH; ++k) {
      fire_w1[k] = fire_w(k);
      fire_b1[k] = fire_w(FIRE_WIDTH + k);
    }
  }
  if (r < ATTN_SLOT_HEADS) {
    [[unroll]] for (uint k = 0; k < FIRE_WIDTH; ++k) fire_w2[r * FIRE_WIDTH + k] = fire_w(2u * FIRE_WIDTH + h * FIRE_WIDTH + k);
    fire_b2[r] = fire_w(2u * FIRE_WIDTH + pc.heads * FIRE_WIDTH + h);
  }
}

float fire_bias(uint r, uint h, uint qpos, uint kpos) {
  const float u = log(1.0 + pc.fire_c * (fire_qf[r] - float(kpos))) * fire_inv[r];
  return fire_eval_slot(r, u);
}
#else
// GPU kernel and naive: rows below L read the per-distance table, the rest
// run the MLP per score with the weights read from fire_mlp (cached).
#define NEAR_TABLE(i) fire_table[ATTN_EXTRA_OFF(0, 4u) + (i)]
#include "attn/near_window.glsl"

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
