// attn.rope's hooks for the flash kernel: every q chunk rotated at i' and
// every k chunk at j as they are loaded (encodings.md section 2: rotary_dim,
// neox/gptj pairs, scaled frequencies, attention_factor). Angles are
// exact-phase (common/phase.glsl), so their error does not grow with
// position. rotary_dim and the style are specialization constants. Needs
// ATTN_EXTRA_PUSH as in attn_flash_rope.comp.
#ifndef PEBENCH_ATTN_ROPE_HOOKS_GLSL
#define PEBENCH_ATTN_ROPE_HOOKS_GLSL

#include "common/phase.glsl"

layout(constant_id = 6) const uint ROPE_DIM = 64;     // rotary_dim R (even, <= HEAD_DIM)
layout(constant_id = 7) const bool ROPE_NEOX = true;  // pair (t, t + R/2), else (2t, 2t + 1)

layout(std430, binding = ATTN_EXTRA_BINDING(0)) readonly buffer Freq { uvec2 freq[]; };  // th'_t, [R/2]

// cos and sin of every pair's angle at one position, for a whole row, so
// that each is computed once per row (an element and its partner share it).
// Unrolled like everything indexed by dims: a rolled loop would make these
// arrays dynamically indexed, which costs llvmpipe minutes of compile time
// (measured: 125 s instead of 7 s for D = 128).
float rope_cos[ROPE_DIM / 2], rope_sin[ROPE_DIM / 2];
void rope_angles(uint pos) {
  [[unroll]] for (uint t = 0; t < ROPE_DIM / 2; ++t) {
    const float a = phase_angle(pos, freq[ATTN_EXTRA_OFF(0, 8u) + t]);
    rope_cos[t] = cos(a);
    rope_sin[t] = sin(a);
  }
}

// Element d of pair t of a row becomes (x_d cos a -+ x_partner sin a) *
// attention_factor; a gptj partner is in the same chunk, a neox partner (R/2
// away) is read from the row in memory (buf[base + ...]).
#define ROPE_ROTATE_ELEMENT(buf, x, u, c, base, cs, sn)                                                \
  {                                                                                                    \
    const uint d = 4 * (c) + (u);                                                                      \
    if (d < ROPE_DIM) {                                                                                \
      const bool first = ROPE_NEOX ? d < ROPE_DIM / 2 : d % 2 == 0;                                    \
      const uint t = ROPE_NEOX ? (first ? d : d - ROPE_DIM / 2) : d / 2;                               \
      const float partner =                                                                            \
          ROPE_NEOX ? float(buf[(base) + (first ? d + ROPE_DIM / 2 : d - ROPE_DIM / 2)]) : x[(u) ^ 1]; \
      y[u] = (first ? x[u] * cs - partner * sn : x[u] * cs + partner * sn) * pc.attention_factor;      \
    }                                                                                                  \
  }

// A whole row in registers (row[off + c]) rotated to pos: angles from the
// tables, partners from a copy of the unrotated row, every index constant.
#define ROPE_ROTATE_ROW(row, off, pos)                                                                  \
  {                                                                                                     \
    rope_angles(pos);                                                                                   \
    vec4 raw[D4P];                                                                                      \
    [[unroll]] for (uint c = 0; c < D4P; ++c) raw[c] = row[(off) + c];                                  \
    [[unroll]] for (uint d = 0; d < ROPE_DIM; ++d) {                                                    \
      const bool first = ROPE_NEOX ? d < ROPE_DIM / 2 : d % 2 == 0;                                     \
      const uint t = ROPE_NEOX ? (first ? d : d - ROPE_DIM / 2) : d / 2;                                \
      const uint p = ROPE_NEOX ? (first ? d + ROPE_DIM / 2 : d - ROPE_DIM / 2) : d ^ 1;                 \
      const float x = raw[d / 4][d % 4], partner = raw[p / 4][p % 4];                                   \
      row[(off) + d / 4][d % 4] =                                                                       \
          (first ? x * rope_cos[t] - partner * rope_sin[t] : x * rope_cos[t] + partner * rope_sin[t]) * \
          pc.attention_factor;                                                                          \
    }                                                                                                   \
  }
#ifndef PEBENCH_ATTN_FLASH_GPU_GLSL
void rope_q_row(uint r, uint qpos) { ROPE_ROTATE_ROW(attn_q, r * D4P, qpos) }
void rope_k_row(uint kpos) { ROPE_ROTATE_ROW(attn_k, 0, kpos) }
#endif

// A staged k chunk (one per iteration of the staging loop): its own angles.
vec4 rope_k_stage(uint kpos, uint c, vec4 x, uint base) {
  vec4 y = x;
  [[unroll]] for (uint u = 0; u < 4; ++u) {
    const uint d = 4 * c + u;
    const uint t = min(ROPE_NEOX ? d % (ROPE_DIM / 2) : d / 2, ROPE_DIM / 2 - 1);
    const float a = phase_angle(kpos, freq[ATTN_EXTRA_OFF(0, 8u) + t]);
    ROPE_ROTATE_ELEMENT(k, x, u, c, base, cos(a), sin(a))
  }
  return y;
}

#ifdef PEBENCH_ATTN_FLASH_GPU_GLSL
// GPU kernel: a lane holds chunks, not rows, so q chunks are rotated like
// staged k chunks, each with its own angles and partners from memory.
vec4 rope_q_chunk(uint qpos, uint c, vec4 x, uint base) {
  vec4 y = x;
  [[unroll]] for (uint u = 0; u < 4; ++u) {
    const uint d = 4 * c + u;
    const uint t = min(ROPE_NEOX ? d % (ROPE_DIM / 2) : d / 2, ROPE_DIM / 2 - 1);
    const float a = phase_angle(qpos, freq[ATTN_EXTRA_OFF(0, 8u) + t]);
    ROPE_ROTATE_ELEMENT(q, x, u, c, base, cos(a), sin(a))
  }
  return y;
}
#define GPU_Q_CHUNK(c, x, base, qpos) rope_q_chunk(qpos, c, x, base)
#define GPU_K_CHUNK(kpos, c, x, base) rope_k_stage(kpos, c, x, base)
#else
#define ATTN_ROW_STATE(r, h, qpos) rope_q_row(r, qpos)
#define ATTN_K_ROW_TRANSFORM(kpos) rope_k_row(kpos)
#define ATTN_K_STAGE_TRANSFORM(kpos, c, x, base) rope_k_stage(kpos, c, x, base)
#endif

#endif
