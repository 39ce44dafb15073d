// How much slower one set of timing samples is than another, as a ratio
// with a distribution-free confidence interval: the Hodges–Lehmann estimate
// of the shift between the two samples' log times and the interval that
// inverts the Mann–Whitney U test (Bauer 1972; R's wilcox.test(conf.int =
// TRUE) on log times). Rank-based like `pebench compare`'s test, so GPU
// timings' long right tail does not widen it, and on log time, so a
// multiplicative slowdown is one shift whatever the case's length.
#pragma once

#include <optional>
#include <vector>

namespace pebench {

struct RatioInterval {
  double estimate = 1;      // e^(median of log y_j - log x_i over every pair)
  double lo = 1, hi = 1;    // the interval's ends, lo <= estimate <= hi
  double confidence = 0;    // its level, 1 - alpha
  bool exact = false;       // from the exact distribution of U, else the normal approximation
};

// y against x (y / x). Absent when either sample has a value that is not
// positive and finite, or has so few values that no interval at this level
// exists (with the exact distribution, 1 - confidence below 2 / C(m+n, m):
// 3 and 3 samples reach at most 90%, 5 and 5 99%). Above 4,194,304 pairs
// each sample is first reduced to 2048 evenly spaced order statistics.
std::optional<RatioInterval> ratio_interval(std::vector<double> x, std::vector<double> y, double confidence);

}  // namespace pebench
