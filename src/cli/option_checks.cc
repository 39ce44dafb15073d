#include "cli/option_checks.h"

#include <sstream>
#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "harness/contract/errors.h"
#include "io/checked_number.h"

namespace pebench {

namespace {

// Seconds in (lo, hi] when lo_open, else [lo, hi], by the checked parser:
// it refuses "nan", "inf" and overflow, which CLI11's conversion takes.
CLI::Validator seconds_in(double lo, bool lo_open, double hi) {
  const std::string range = fmt::format("SECONDS in {}{:g}, {:g}]", lo_open ? "(" : "[", lo, hi);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        if (parse_real(text, lo, hi, lo_open)) return "";
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
        if (parse_whole_u64(text, 0, UINT64_MAX)) return "";
        return fmt::format("'{}' is not a whole number from 0 to {}", text, UINT64_MAX);
      },
      "UINT64");
}

CLI::Validator whole_in(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        if (parse_whole(text, lo, hi)) return "";
        return fmt::format("'{}' is not a whole number from {} to {}", text, lo, hi);
      },
      fmt::format("INT in [{}, {}]", lo, hi));
}

CLI::Validator finite_in(double lo, double hi, bool lo_open) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        if (parse_real(text, lo, hi, lo_open)) return "";
        return fmt::format("'{}' is not a finite number {} {:g} and at most {:g}", text, lo_open ? "above" : "from",
                           lo, hi);
      },
      fmt::format("NUMBER in {}{:g}, {:g}]", lo_open ? "(" : "[", lo, hi));
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

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace pebench
