// The one parser of numbers given as text (command-line options, ours and
// Google Benchmark's): the whole text must be the number, finite, in range.
// Failures are one line that quotes the text and names the range, thrown as
// BadValueError (bad input: exit 2).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace pebench {

class BadValueError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `text` as a finite decimal number in [lo, hi] (lo excluded when lo_open),
// else nullopt: no leading space, no hexadecimal, no nan or inf, no overflow
// or underflow.
std::optional<double> parse_real(const std::string& text, double lo, double hi, bool lo_open = false);
// `text` as a whole number (decimal digits, optional leading '-') in [lo, hi], else nullopt.
std::optional<int64_t> parse_whole(const std::string& text, int64_t lo, int64_t hi);
std::optional<uint64_t> parse_whole_u64(const std::string& text, uint64_t lo, uint64_t hi);

// As above, throwing BadValueError: "NAME 'TEXT': not a number from LO to HI".
double checked_real(const std::string& name, const std::string& text, double lo, double hi, bool lo_open = false);
int64_t checked_whole(const std::string& name, const std::string& text, int64_t lo, int64_t hi);

// The message the checked forms throw.
std::string real_range_message(const std::string& name, const std::string& text, double lo, double hi, bool lo_open);
std::string whole_range_message(const std::string& name, const std::string& text, long double lo, long double hi);

}  // namespace pebench
