// attn.rope's hooks for the flash kernels (encodings.md section 2:
// rotary_dim, neox/gptj pairs, scaled frequencies, attention_factor). The
// GPU kernel rotates every q chunk at i' and every k chunk at j as they are
// loaded; angles are exact-phase (common/phase.glsl), so their error does not
// grow with position; rotary_dim and the style are specialization constants.
// The CPU kernel does so in direct mode (decode); staged, it reads q and
// k already rotated (below). Needs ATTN_EXTRA_PUSH as in
// attn_flash_rope.comp. M-RoPE (ROPE_MROPE 1 chunked, 2 interleaved): pair
// t's position is component c(t) of pos_ids [3, M] at the token's column
// (q: i', k: j). xPos (ROPE_XPOS): each pair's cos and sin also carry
// zeta_t^((p - c) xpos_rate), q's exponent as given, k's negated.
#ifndef PEBENCH_ATTN_ROPE_HOOKS_GLSL
#define PEBENCH_ATTN_ROPE_HOOKS_GLSL

#include "common/phase.glsl"
#include "common/rope.glsl"

layout(constant_id = 6) const uint ROPE_DIM = 64;     // rotary_dim R (even, <= HEAD_DIM)
layout(constant_id = 7) const bool ROPE_NEOX = true;  // pair (t, t + R/2), else (2t, 2t + 1)
layout(constant_id = 8) const uint ROPE_MROPE = 0;    // 0 linear positions, 1 M-RoPE chunked, 2 interleaved
layout(constant_id = 9) const bool ROPE_XPOS = false;

layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer Freq { uvec2 freq[]; };  // th'_t, [R/2]
// M-RoPE: [3, M] (t, h, w) positions, non-negative (another table where unused).
layout(std430, binding = ATTN_EXTRA_BINDING(3)) readonly buffer PosIds { int pos_ids[]; };

// Pair t's position for the token at column pos.
uint rope_position(uint pos, uint t) {
  if (ROPE_MROPE == 0) return pos;
  const uint c = mrope_component(t, ROPE_MROPE == 2, pc.mrope_s0, pc.mrope_s1, pc.mrope_s2);
  return uint(pos_ids[ATTN_EXTRA_OFF(3, 4u) + c * pc.kv_seq + pos]);
}
// cos and sin of pair t's angle at column pos (xPos's factor folded in).
vec2 rope_cos_sin(uint pos, uint t, bool is_k) {
  const float a = phase_angle(rope_position(pos, t), freq[ATTN_EXTRA_OFF(0, 8u) + t]);
  const float e = float(int(pos) - int(pc.xpos_centre)) * (is_k ? -pc.xpos_rate : pc.xpos_rate);
  const float g = ROPE_XPOS ? xpos_factor(t, ROPE_DIM, e) : 1.0;
  return vec2(cos(a), sin(a)) * g;
}

// Dim d < ROPE_DIM of a row: whether it is the first of its pair, the
// pair's index t (its angle), and its partner dim.
bool rope_first(uint d) { return ROPE_NEOX ? d < ROPE_DIM / 2 : d % 2 == 0; }
uint rope_pair(uint d) { return ROPE_NEOX ? d % (ROPE_DIM / 2) : d / 2; }
uint rope_partner(uint d) { return ROPE_NEOX ? (rope_first(d) ? d + ROPE_DIM / 2 : d - ROPE_DIM / 2) : d ^ 1; }
// Element x of pair (x, partner) rotated by the pair's angle (cos cs, sin sn),
// times attention_factor.
float rope_rotated(bool first, float x, float partner, float cs, float sn) {
  return (first ? x * cs - partner * sn : x * cs + partner * sn) * pc.attention_factor;
}

#ifdef PEBENCH_ATTN_FLASH_GPU_GLSL
// Chunk c of a q or k row (buffer buf, row at element base), loaded as x,
// rotated to pos: each element with its own angle; a gptj partner is in the
// same chunk, a neox partner (R/2 away) is read from the row in memory.
#define ROPE_ROTATE_CHUNK(buf, pos, c, x, base, is_k)                                                    \
  {                                                                                                    \
    [[unroll]] for (uint u = 0; u < 4; ++u) {                                                          \
      const uint d = 4 * (c) + u;                                                                      \
      if (d < ROPE_DIM) {                                                                              \
        const vec2 cs = rope_cos_sin(pos, rope_pair(d), is_k);                                         \
        const float partner = ROPE_NEOX ? float(buf[(base) + rope_partner(d)]) : x[u ^ 1];             \
        y[u] = rope_rotated(rope_first(d), x[u], partner, cs.x, cs.y);                                 \
      }                                                                                                \
    }                                                                                                  \
  }
vec4 rope_k_stage(uint kpos, uint c, vec4 x, uint base) {
  vec4 y = x;
  ROPE_ROTATE_CHUNK(k, kpos, c, x, base, true)
  return y;
}
// A lane holds chunks, not rows, so q chunks are rotated like k chunks.
vec4 rope_q_chunk(uint qpos, uint c, vec4 x, uint base) {
  vec4 y = x;
  ROPE_ROTATE_CHUNK(q, qpos, c, x, base, false)
  return y;
}
#define GPU_Q_CHUNK(c, x, base, qpos) rope_q_chunk(qpos, c, x, base)
#define GPU_K_CHUNK(kpos, c, x, base) rope_k_stage(kpos, c, x, base)
#else
// CPU kernel. Direct (decode: every key is folded once): q and k rotated
// as they load, a whole row in registers at a time. Staged (f16 cases; f32
// ones run attn_flash_nope on the copies): q and k arrive rotated, in the
// f32 copies q_rot and k_rot that attn_rope_qk wrote once
// (AttnRopeCase::record), and are read from them in place of q and k.
// Rotating inside the staged kernel cost it 141% over attn.nope at N = M =
// 2048 (each K tile once per workgroup of rows, and the q rows' rotation
// code slowed the whole fold); DIRECT is a specialization constant, so the
// staged pipeline holds no rotation code.

// cos and sin of every pair's angle at one position, for a whole row, so
// that each is computed once per row (an element and its partner share it).
// Unrolled like everything indexed by dims: a rolled loop would make these
// arrays dynamically indexed, which costs llvmpipe minutes of compile time
// (measured: 125 s instead of 7 s for D = 128).
float rope_cos[ROPE_DIM / 2], rope_sin[ROPE_DIM / 2];
void rope_angles(uint pos, bool is_k) {
  [[unroll]] for (uint t = 0; t < ROPE_DIM / 2; ++t) {
    const vec2 cs = rope_cos_sin(pos, t, is_k);
    rope_cos[t] = cs.x;
    rope_sin[t] = cs.y;
  }
}

// A whole row in registers (row[off + c]) rotated to pos: angles from the
// tables, partners from a copy of the unrotated row, every index constant.
#define ROPE_ROTATE_ROW(row, off, pos, is_k)                                                            \
  {                                                                                                     \
    rope_angles(pos, is_k);                                                                             \
    vec4 raw[D4P];                                                                                      \
    [[unroll]] for (uint c = 0; c < D4P; ++c) raw[c] = row[(off) + c];                                  \
    [[unroll]] for (uint d = 0; d < ROPE_DIM; ++d) {                                                    \
      const uint p = rope_partner(d), t = rope_pair(d);                                                 \
      row[(off) + d / 4][d % 4] = rope_rotated(rope_first(d), raw[d / 4][d % 4], raw[p / 4][p % 4],     \
                                               rope_cos[t], rope_sin[t]);                               \
    }                                                                                                   \
  }
void rope_q_row(uint r, uint qpos) { ROPE_ROTATE_ROW(attn_q, r * D4P, qpos, false) }
void rope_k_row(uint kpos) { ROPE_ROTATE_ROW(attn_k, 0, kpos, true) }

layout(std430, binding = ATTN_EXTRA_BINDING(1)) readonly buffer QRot { float q_rot[]; };  // [B,H,N,D]
layout(std430, binding = ATTN_EXTRA_BINDING(1)) readonly buffer QRotV { vec4 q_rot_c[]; };
layout(std430, binding = ATTN_EXTRA_BINDING(2)) readonly buffer KRot { float k_rot[]; };  // [B,Hkv,M,D]
layout(std430, binding = ATTN_EXTRA_BINDING(2)) readonly buffer KRotV { vec4 k_rot_c[]; };
vec4 rope_k_rotated(uint c, uint base) { return ATTN_LOAD_CHUNK(k_rot, k_rot_c, ATTN_EXTRA_OFF(2, 4u) + base, c); }
void rope_q_rotated(uint r, uint h, uint qpos) {
  const uint base = attn_q_row_at(h, qpos) * HEAD_DIM;
  [[unroll]] for (uint c = 0; c < D4P; ++c) attn_q[r * QW + c] = ATTN_LOAD_CHUNK(q_rot, q_rot_c, ATTN_EXTRA_OFF(1, 4u) + base, c);
}
void rope_row_state(uint r, uint h, uint qpos) {
  if (DIRECT) {
    rope_q_row(r, qpos);
  } else {
    rope_q_rotated(r, h, qpos);
  }
}
#define ATTN_ROW_STATE(r, h, qpos) rope_row_state(r, h, qpos)
#define ATTN_K_ROW_TRANSFORM(kpos) rope_k_row(kpos)
#define ATTN_K_STAGE_TRANSFORM(kpos, c, x, base) rope_k_rotated(c, base)
#endif

#endif
