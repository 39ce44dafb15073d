#include "cli/option_checks.h"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "harness/contract/errors.h"

namespace pebench {

namespace {

// Seconds in (lo, hi] when lo_open, else [lo, hi]. strtod, not CLI11's
// conversion: it takes "nan" and "inf", which the checks here refuse.
CLI::Validator seconds_in(double lo, bool lo_open, double hi) {
  const std::string range = fmt::format("SECONDS in {}{:g}, {:g}]", lo_open ? "(" : "[", lo, hi);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double s = std::strtod(text.c_str(), &end);
        const bool parsed = !text.empty() && end == text.c_str() + text.size() && errno != ERANGE;
        if (parsed && std::isfinite(s) && (lo_open ? s > lo : s >= lo) && s <= hi) return "";
        return fmt::format("'{}' is not a number of seconds {} {:g} and at most {:g}", text,
                           lo_open ? "above" : "from", lo, hi);
      },
      range);
}

}  // namespace

CLI::Validator submit_timeout_seconds() { return seconds_in(0, true, kMaxSubmitTimeoutS); }

CLI::Validator warmup_seconds() { return seconds_in(0, false, 60); }

CLI::Validator whole_uint64() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        uint64_t v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (!text.empty() && ec == std::errc() && end == text.data() + text.size()) return "";
        return fmt::format("'{}' is not a whole number from 0 to {}", text, UINT64_MAX);
      },
      "UINT64");
}

void reject_empty_values(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_type_size_max() == 0) continue;  // a flag: it takes no value
    for (const std::string& value : opt->results()) {
      if (value.empty()) {
        throw UsageError(fmt::format("{}: empty value (leave the option out for its default)", opt->get_name()));
      }
    }
  }
}

}  // namespace pebench
