// One pattern for an enum's names: a table listed in the enumerators'
// order, looked up by value. A leaf (no pebench includes), so every layer's
// enums use it: harness (dtype, tensor role, parameter type, case status)
// and analysis (verdict, status change).
#pragma once

#include <array>
#include <cstddef>

namespace pebench {

// The name of `e` in `names` (indexed by the enumerator's value), or
// `fallback` for a value past the table. Pair each table with a
// static_assert that it has one name per enumerator.
template <typename E, size_t N>
constexpr const char* enum_name(E e, const std::array<const char*, N>& names, const char* fallback) {
  const auto i = static_cast<size_t>(e);
  return i < N ? names[i] : fallback;
}

}  // namespace pebench
