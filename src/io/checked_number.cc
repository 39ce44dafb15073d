#include "io/checked_number.h"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace pebench {

std::optional<double> parse_real(const std::string& text, double lo, double hi, bool lo_open) {
  // strtod, not from_chars: both, but strtod also takes "1e3" forms everyone
  // writes; "nan", "inf" and overflow are refused below.
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
  // Decimal only: strtod also reads hexadecimal ("0x10" is 16).
  if (text.find_first_of("xX") != std::string::npos) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  if (lo_open ? !(v > lo) : !(v >= lo)) return std::nullopt;
  if (!(v <= hi)) return std::nullopt;
  return v;
}

std::optional<int64_t> parse_whole(const std::string& text, int64_t lo, int64_t hi) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

std::optional<uint64_t> parse_whole_u64(const std::string& text, uint64_t lo, uint64_t hi) {
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

std::string real_range_message(const std::string& name, const std::string& text, double lo, double hi, bool lo_open) {
  return fmt::format("{} '{}': not a finite number {} {:g} and at most {:g}", name, text, lo_open ? "above" : "from",
                     lo, hi);
}

std::string whole_range_message(const std::string& name, const std::string& text, long double lo, long double hi) {
  return fmt::format("{} '{}': not a whole number from {:.0f} to {:.0f}", name, text, lo, hi);
}

double checked_real(const std::string& name, const std::string& text, double lo, double hi, bool lo_open) {
  if (auto v = parse_real(text, lo, hi, lo_open)) return *v;
  throw BadValueError(real_range_message(name, text, lo, hi, lo_open));
}

int64_t checked_whole(const std::string& name, const std::string& text, int64_t lo, int64_t hi) {
  if (auto v = parse_whole(text, lo, hi)) return *v;
  throw BadValueError(whole_range_message(name, text, lo, hi));
}

}  // namespace pebench
