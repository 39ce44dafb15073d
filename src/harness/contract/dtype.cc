#include "harness/contract/dtype.h"

#include <array>
#include <cmath>
#include <cstring>

#include "analysis/enum_names.h"

namespace pebench {

namespace {

constexpr std::array<const char*, 3> kDTypeNames = {"f32", "f16", "i32"};
constexpr std::array<const char*, 3> kNpyDescrs = {"<f4", "<f2", "<i4"};
static_assert(kDTypeNames.size() == static_cast<size_t>(DType::kI32) + 1, "one name per DType");

}  // namespace

const char* dtype_name(DType t) { return enum_name(t, kDTypeNames, "?"); }

std::optional<DType> parse_dtype(const std::string& name) {
  if (name == "f32") return DType::kF32;
  if (name == "f16") return DType::kF16;
  if (name == "i32") return DType::kI32;
  return std::nullopt;
}

size_t dtype_bytes(DType t) { return t == DType::kF16 ? 2 : 4; }

const char* npy_descr(DType t) { return enum_name(t, kNpyDescrs, "?"); }

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));  // inf / NaN
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (e <= 0) {
    // Subnormal half (or zero): shift the full mantissa, round to nearest even.
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - e;
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: correct
  return static_cast<uint16_t>(sign | h);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {  // subnormal: value = mant * 2^-24
      float f = std::ldexp(static_cast<float>(mant), -24);
      std::memcpy(&x, &f, 4);
      x |= sign;
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

double round_to(DType t, double v) {
  switch (t) {
    case DType::kF32:
      return static_cast<double>(static_cast<float>(v));
    case DType::kF16:
      return static_cast<double>(half_to_float(float_to_half(static_cast<float>(v))));
    case DType::kI32:
      return static_cast<double>(static_cast<int32_t>(v));
  }
  return v;
}

}  // namespace pebench
