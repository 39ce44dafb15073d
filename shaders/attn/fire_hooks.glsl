// attn.fire's hook, shared by the flash (CPU and GPU) and the naive score
// kernels: bias_h = w2[h].relu(w1 u + b1) + b2[h], u = ln(1 + c d) /
// (ln(1 + c max(i', L)) + eps), d = i' - j.
//
// For rows with i' < L the normaliser is ln(1 + c L) + eps whatever the row,
// so the bias depends on (h, d) only: attn_fire_table.comp runs the MLP once
// per (head, distance) into fire_table [H, M+N-1] (T5's layout), and those
// rows read one float a score (in the CPU kernel's staged band, one load a
// key for all row slots: near_window.glsl). Rows with i' >= L each have their
// own normaliser, so no two of them share a u: the MLP runs per score there
// (one log and 3W operations, W = FIRE_WIDTH unrolled), its weights read
// from fire_mlp [w1 W | b1 W | w2 H W | b2 H] (attn_fire_pack.comp).
// Extra bindings 0 (fire_table) and 1 (fire_mlp); push: fire_c, fire_L, eps.
#ifndef PEBENCH_ATTN_FIRE_HOOKS_GLSL
#define PEBENCH_ATTN_FIRE_HOOKS_GLSL

layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer FireTable { float fire_table[]; };  // [H, M+N-1]
layout(std430, binding = ATTN_EXTRA_BINDING(1)) readonly buffer FireMlp { float fire_mlp[]; };
layout(constant_id = 6) const uint FIRE_WIDTH = 32;  // mlp_width W

#define NEAR_TABLE(i) fire_table[ATTN_EXTRA_OFF(0, 4u) + (i)]
#include "attn/near_window.glsl"

float fire_inv[ATTN_ROW_SLOTS];  // 1 / (ln(1 + c max(i', L)) + eps) of each row slot
float fire_qf[ATTN_ROW_SLOTS];   // i' as a float (exact below 2^24)

float fire_w(uint i) { return fire_mlp[ATTN_EXTRA_OFF(1, 4u) + i]; }

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
  if (qpos < pc.fire_L) return near_entry(r, kpos);
  const float u = log(1.0 + pc.fire_c * (fire_qf[r] - float(kpos))) * fire_inv[r];
  return fire_eval(h, u);
}

#define ATTN_ROW_STATE(r, h, qpos) fire_row_state(r, h, qpos)
#define ATTN_SCORE_TERM(r, h, qpos, kpos) fire_bias(r, h, qpos, kpos)

#endif
