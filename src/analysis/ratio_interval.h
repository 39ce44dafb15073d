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
  double estimate = 1;    // e^(median of log y_j - log x_i over every pair)
  double lo = 1, hi = 1;  // the interval's ends, lo <= estimate <= hi
  double confidence = 0;  // its level, 1 - alpha
  bool exact = false;     // from the exact distribution of U (or B), else the normal approximation
  // paired_ratio_interval: the samples were paired by start time, and the
  // median distance in time between the two samples of a pair.
  bool paired = false;
  double median_gap_ns = 0;
};

// y against x (y / x). Absent when either sample has a value that is not
// positive and finite, or has so few values that no interval at this level
// exists (with the exact distribution, 1 - confidence below 2 / C(m+n, m):
// 3 and 3 samples reach at most 90%, 5 and 5 99%). Above 4,194,304 pairs
// each sample is first reduced to 2048 evenly spaced order statistics.
std::optional<RatioInterval> ratio_interval(std::vector<double> x, std::vector<double> y, double confidence);

// y against x when each sample's start time is known (time_ns.started_ns,
// one clock for both): each y sample meets the x sample that began nearest
// it, the estimate is the median of those log ratios, and the interval is
// the sign test's (order statistics of Binomial(n, 1/2); exact). A machine
// whose speed drifts during a run (a shared host, a phone that throttles)
// moves samples taken together alike, which pooled samples cannot see.
// Pairs share x samples when y has more, so the interval is approximate
// where drift is slow against the schedule. Absent under the same
// conditions as ratio_interval, or when a start-time list does not match
// its samples.
std::optional<RatioInterval> paired_ratio_interval(const std::vector<double>& x, const std::vector<double>& x_started,
                                                   const std::vector<double>& y, const std::vector<double>& y_started,
                                                   double confidence);

}  // namespace pebench
