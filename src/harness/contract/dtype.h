// Element types of tensors and the IEEE half conversions the host needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace pebench {

enum class DType : uint8_t { kF32, kF16, kI32 };

const char* dtype_name(DType t);  // "f32", "f16", "i32"
std::optional<DType> parse_dtype(const std::string& name);
size_t dtype_bytes(DType t);
const char* npy_descr(DType t);  // "<f4", "<f2", "<i4"

// IEEE 754 binary16 <-> binary32, round to nearest even, with subnormals,
// infinities and NaN.
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);

// `v` rounded to what a `t` element stores (f32, f16; i32 truncates).
double round_to(DType t, double v);

}  // namespace pebench
