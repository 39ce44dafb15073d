// abs.complex_order's angle: freq p + phase reduced exactly to [-pi, pi)
// (abs_complex_order.comp explains how), shared by the fused kernel and the
// split one (abs_complex_order_split.comp).
#ifndef PEBENCH_COMPLEX_ANGLE_GLSL
#define PEBENCH_COMPLEX_ANGLE_GLSL

// 1/(2 pi) in binary, 32 bits a word from the binary point on. Seven words:
// the largest f32 exponent skips three (they only add whole turns) and reads
// four. Picked by selects: with a dynamically indexed constant array the
// kernel ran 3x slower on lavapipe (13 vs 4 ms at 1024 x 512).
#define INV_2PI_0 0x28BE60DBu
#define INV_2PI_1 0x9391054Au
#define INV_2PI_2 0x7F09D5F4u
#define INV_2PI_3 0x7D4D3770u
#define INV_2PI_4 0x36D8A566u
#define INV_2PI_5 0x4F10E410u
#define INV_2PI_6 0x7F9458EAu

uint funnel(uint lo, uint hi, uint s) { return s == 0u ? lo : (lo >> s) | (hi << (32u - s)); }

// frac(v / (2 pi)) as a 64-bit fixed-point fraction of a turn (low word
// first), truncated: error < 2^-64 turn for any finite v. |v| = m 2^e with
// m < 2^24, and m times 128 bits of 1/(2 pi) is exact in integers.
uvec2 turns_q64(float v) {
  const uint bits = floatBitsToUint(v);
  const uint biased = bitfieldExtract(bits, 23, 8);
  const uint m = (bits & 0x7fffffu) | (biased != 0u ? 0x800000u : 0u);
  const int e = int(max(biased, 1u)) - 150;
  // Words of 1/(2 pi) before j0 contribute m 2^e 2^-32(j+1): whole turns.
  const uint j0 = uint(max(e, 0)) >> 5;
  const uint w3 = j0 == 0u ? INV_2PI_0 : j0 == 1u ? INV_2PI_1 : j0 == 2u ? INV_2PI_2 : INV_2PI_3;
  const uint w2 = j0 == 0u ? INV_2PI_1 : j0 == 1u ? INV_2PI_2 : j0 == 2u ? INV_2PI_3 : INV_2PI_4;
  const uint w1 = j0 == 0u ? INV_2PI_2 : j0 == 1u ? INV_2PI_3 : j0 == 2u ? INV_2PI_4 : INV_2PI_5;
  const uint w0 = j0 == 0u ? INV_2PI_3 : j0 == 1u ? INV_2PI_4 : j0 == 2u ? INV_2PI_5 : INV_2PI_6;
  // P = m * (w3:w2:w1:w0) in five words; a 64-bit product plus one word
  // cannot overflow 64 bits.
  uint P0, P1, P2, P3, P4, h, c;
  umulExtended(m, w0, h, P0);
  umulExtended(m, w1, P2, P1);
  P1 = uaddCarry(P1, h, c);
  h = P2 + c;
  umulExtended(m, w2, P3, P2);
  P2 = uaddCarry(P2, h, c);
  h = P3 + c;
  umulExtended(m, w3, P4, P3);
  P3 = uaddCarry(P3, h, c);
  P4 += c;
  // v / (2 pi) = P 2^(e - 32 j0 - 128): the fraction's top 64 bits are P's
  // bits [L, L + 64), L = 64 + 32 j0 - e >= 33; from L = 152 on, P < 2^L.
  const int L = 64 + 32 * int(j0) - e;
  const uint k = uint(min(L, 160)) >> 5, s = uint(L) & 31u;
  const uint a0 = k == 1u ? P1 : k == 2u ? P2 : k == 3u ? P3 : k == 4u ? P4 : 0u;
  const uint a1 = k == 1u ? P2 : k == 2u ? P3 : k == 3u ? P4 : 0u;
  const uint a2 = k == 1u ? P3 : k == 2u ? P4 : 0u;
  uvec2 q = uvec2(funnel(a0, a1, s), funnel(a1, a2, s));
  if ((bits >> 31) != 0u) q = uvec2(-q.x, ~q.y + (q.x == 0u ? 1u : 0u));  // 1 - frac
  return biased == 255u ? uvec2(0u) : q;  // inf or NaN: no meaningful angle
}

// freq p + phase reduced to [-pi, pi). p times the 64-bit turn fraction of
// freq (as common/phase.glsl does) keeps 32 bits of turn to within 2^-32 for
// p < 2^32, so the angle's error does not grow with p.
float angle(float f, float ph, uint p) {
  const uvec2 w = turns_q64(f);
  uint carry, low;
  umulExtended(p, w.x, carry, low);
  const uint turns = p * w.y + carry + turns_q64(ph).y;  // wraps = whole turns
  return float(int(turns)) * 1.4629180792671596e-09;      // 2 pi / 2^32
}

#endif
