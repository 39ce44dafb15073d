// The RoPE rotation of one pair: (x1, x2) -> (x1 cos a - x2 sin a,
// x2 cos a + x1 sin a) * f (encodings.md section 2), for scalars and for
// four pairs at once.
#ifndef PEBENCH_ROPE_GLSL
#define PEBENCH_ROPE_GLSL

vec2 rope_rotate(float x1, float x2, float c, float s, float f) {
  return vec2(x1 * c - x2 * s, x2 * c + x1 * s) * f;
}

void rope_rotate4(vec4 x1, vec4 x2, vec4 c, vec4 s, float f, out vec4 y1, out vec4 y2) {
  y1 = (x1 * c - x2 * s) * f;
  y2 = (x2 * c + x1 * s) * f;
}

// M-RoPE (encodings.md section 2): the position component (0 t, 1 h, 2 w)
// frequency index t reads, for section s0:s1:s2; chunked (Qwen2-VL,
// Qwen2.5-VL) or interleaved THW (Qwen3-VL).
uint mrope_component(uint t, bool interleaved, uint s0, uint s1, uint s2) {
  if (interleaved) return (t % 3 == 1 && t < 3 * s1) ? 1 : ((t % 3 == 2 && t < 3 * s2) ? 2 : 0);
  return t < s0 ? 0 : (t < s0 + s1 ? 1 : 2);
}

// xPos: zeta_t^e with zeta_t = (2t + 0.4 R) / (1.4 R) and e = (p - c) /
// scale_base (negated for k), as exp2(e log2 zeta_t).
float xpos_factor(uint t, uint rotary_dim, float e) {
  const float r = float(rotary_dim);
  return exp2(e * log2((2.0 * float(t) + 0.4 * r) / (1.4 * r)));
}

#endif
