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

#endif
