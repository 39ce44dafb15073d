#include "analysis/sample_spread.h"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/mann_whitney.h"

namespace pebench {
namespace {

// The q-quantile of sorted values, interpolating between neighbours
// (numpy's default, "linear").
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace

SampleSpread sample_spread(std::vector<double> samples) {
  SampleSpread s;
  s.n = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.q1 = quantile(samples, 0.25);
  s.median = quantile(samples, 0.5);
  s.q3 = quantile(samples, 0.75);
  return s;
}

size_t min_comparable_samples(double alpha) {
  for (size_t n = 1; n <= kExactMaxSize; ++n) {
    const double u = static_cast<double>(n * n);  // every sample of one side above every one of the other
    if (2.0 * mann_whitney_exact_sf(u, n, n) < alpha) return n;
  }
  return kExactMaxSize;
}

std::string samples_cell(size_t n, double alpha) {
  return n < min_comparable_samples(alpha) ? fmt::format("{}!", n) : std::to_string(n);
}

std::string iqr_cell(const SampleSpread& s) {
  if (s.n < 2 || !(s.median > 0)) return "-";
  return fmt::format("{:.1f}%", 100.0 * s.iqr_relative());
}

}  // namespace pebench
