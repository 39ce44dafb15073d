// Command-line values that CLI11 would accept but pebench must not: an
// empty value (CLI11 stores "", which our commands read as "not given"),
// numbers outside what the code can represent, and the Google Benchmark
// flags pebench passes through. Each failure is one line naming the value
// (exit 2).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace pebench {

// The longest one submission may be waited for. A VkFence wait takes
// uint64 nanoseconds; a day is far below that and far above any real case.
inline constexpr double kMaxSubmitTimeoutS = 86400;

// Validator for --timeout: a finite number of seconds in (0, kMaxSubmitTimeoutS].
CLI::Validator submit_timeout_seconds();
// --warmup: seconds in [0, 60].
CLI::Validator warmup_seconds();
// Validator for a uint64 option such as --seed: digits only, at most 2^64-1
// (CLI11 itself wraps "-1" and saturates larger values).
CLI::Validator whole_uint64();
// A whole number in [lo, hi] (compare --min-samples, --load-neighbours).
CLI::Validator whole_in(int64_t lo, int64_t hi);
// A finite number in [lo, hi] ((lo, hi] when lo_open).
CLI::Validator finite_in(double lo, double hi, bool lo_open = false);

// Throws UsageError naming the first option of `app` given with an empty value.
void reject_empty_values(const CLI::App& app);

// An option's value split at whitespace ("attn.rope f16" -> 2 words).
std::vector<std::string> split_words(const std::string& s);

}  // namespace pebench
