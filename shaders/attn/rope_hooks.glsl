// attn.rope's hooks for the flash kernel: each q row rotated at i' when it is
// loaded, each key row at j once loaded or staged (encodings.md section 2:
// rotary_dim, neox/gptj pairs, scaled frequencies, attention_factor).
// Angles are exact-phase (common/phase.glsl), so their error does not grow
// with position. rotary_dim and the style are specialization constants, so
// the pair loop unrolls and the rows stay in registers. Needs
// ATTN_EXTRA_PUSH as in attn_flash_rope.comp.
#ifndef PEBENCH_ATTN_ROPE_HOOKS_GLSL
#define PEBENCH_ATTN_ROPE_HOOKS_GLSL

#include "common/phase.glsl"
#include "common/rope.glsl"

layout(constant_id = 6) const uint ROPE_DIM = 64;     // rotary_dim R (even, <= HEAD_DIM)
layout(constant_id = 7) const bool ROPE_NEOX = true;  // pair (t, t + R/2), else (2t, 2t + 1)

layout(std430, binding = ATTN_EXTRA_BINDING0) readonly buffer Freq { uvec2 freq[]; };  // th'_t, [R/2]

// Rotates the D4P chunks of `row` starting at `off` to position `pos`.
#define ROPE_ROTATE(row, off, pos)                                                                      \
  [[unroll]] for (uint t = 0; t < ROPE_DIM / 2; ++t) {                                                  \
    const uint e1 = ROPE_NEOX ? t : 2 * t, e2 = ROPE_NEOX ? t + ROPE_DIM / 2 : 2 * t + 1;              \
    const float a = phase_angle(pos, freq[t]);                                                          \
    const vec2 y = rope_rotate(row[(off) + e1 / 4][e1 % 4], row[(off) + e2 / 4][e2 % 4], cos(a), sin(a), \
                               pc.attention_factor);                                                    \
    row[(off) + e1 / 4][e1 % 4] = y.x;                                                                  \
    row[(off) + e2 / 4][e2 % 4] = y.y;                                                                  \
  }

void rope_q(uint r, uint qpos) { ROPE_ROTATE(attn_q, r * D4P, qpos) }
void rope_k(uint kpos) { ROPE_ROTATE(attn_k, 0, kpos) }

// Staged mode: every pair of the n keys staged at t0, spread over the workgroup.
void rope_k_tile(uint t0, uint n) {
  for (uint e = gl_LocalInvocationID.x; e < n * (ROPE_DIM / 2); e += gl_WorkGroupSize.x) {
    const uint jt = e / (ROPE_DIM / 2), t = e % (ROPE_DIM / 2);
    const uint e1 = ROPE_NEOX ? t : 2 * t, e2 = ROPE_NEOX ? t + ROPE_DIM / 2 : 2 * t + 1;
    const uint c1 = jt * D4P + e1 / 4, c2 = jt * D4P + e2 / 4;
    const float a = phase_angle(t0 + jt, freq[t]);
    const vec2 y = rope_rotate(tile_k[c1][e1 % 4], tile_k[c2][e2 % 4], cos(a), sin(a), pc.attention_factor);
    tile_k[c1][e1 % 4] = y.x;
    tile_k[c2][e2 % 4] = y.y;
  }
}

#define ATTN_Q_TRANSFORM(r, qpos) rope_q(r, qpos)
#define ATTN_K_TRANSFORM(kpos, kr) rope_k(kpos)
#define ATTN_K_TILE_TRANSFORM(t0, n) rope_k_tile(t0, n)

#endif
