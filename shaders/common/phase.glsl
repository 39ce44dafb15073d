// Angles p * w for an integer position p, with w given as a 64-bit
// fixed-point fraction of a turn: w_q64 = round(frac(w / 2pi) * 2^64),
// split as (low word, high word). The product is taken modulo one turn in
// exact integer arithmetic, so the angle's error (about 2^-24 of pi, from the
// final float conversion) does not grow with p, where float(p) * w loses
// p * w * 2^-24. Built on the host by src/suites/common/phase.h.
#ifndef PEBENCH_PHASE_GLSL
#define PEBENCH_PHASE_GLSL

// p * w reduced to [-pi, pi).
float phase_angle(uint p, uvec2 w_q64) {
  uint carry, low;
  umulExtended(p, w_q64.x, carry, low);
  const uint turns_q32 = p * w_q64.y + carry;  // top 32 bits of the fraction (wraps = whole turns)
  return float(int(turns_q32)) * 1.4629180792671596e-09;  // 2 pi / 2^32
}

// (s, c) <- rotated by one step (sw, cw) = (sin w, cos w): sin(a + w),
// cos(a + w), four lanes at once. Items that step through positions from an
// exact anchor (abs.sinusoidal, rope.apply) use it; each step rounds once.
void phase_step(inout vec4 s, inout vec4 c, vec4 sw, vec4 cw) {
  const vec4 s_next = s * cw + c * sw;
  c = c * cw - s * sw;
  s = s_next;
}

#endif
