// Host side of shaders/common/phase.glsl: an angular frequency as a 64-bit
// fixed-point fraction of a turn, split into the two uint32 words the shader
// reads as a uvec2 (low word first).
#pragma once

#include <cmath>
#include <cstdint>
#include <utility>

namespace pebench {

inline std::pair<uint32_t, uint32_t> turn_fraction_q64(double w) {
  // long double (64-bit mantissa on x86-64) keeps the fraction's low bits.
  const long double turns = static_cast<long double>(w) / (2.0L * 3.14159265358979323846264338327950288L);
  const long double frac = turns - std::floor(turns);  // [0, 1)
  const long double rounded = std::floor(std::ldexp(frac, 64) + 0.5L);
  const uint64_t q = rounded >= 18446744073709551616.0L ? 0 : static_cast<uint64_t>(rounded);  // 1 turn == 0
  return {static_cast<uint32_t>(q & 0xffffffffu), static_cast<uint32_t>(q >> 32)};
}

// Positions an item steps through by rotating (sin, cos) from one exact
// anchor (phase_step in phase.glsl; abs.sinusoidal and rope.apply on CPU
// devices), at most: each step rounds once, so at most this many - 1
// roundings reach an output.
constexpr int64_t kMaxRotationSteps = 8;

// The positions per item: the largest of kMaxRotationSteps, its halves and 1
// that divides seq and still leaves at least 4096 items (each position has
// items_per_position of them) to keep a CPU device's threads busy.
inline int64_t rotation_block(int64_t seq, int64_t items_per_position) {
  constexpr int64_t kMinItems = 4096;
  int64_t block = kMaxRotationSteps;
  while (block > 1 && (seq % block != 0 || seq / block * items_per_position < kMinItems)) block /= 2;
  return block;
}

}  // namespace pebench
