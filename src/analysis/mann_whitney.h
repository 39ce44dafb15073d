// The Mann–Whitney U test (Wilcoxon rank-sum): do two sets of timing samples
// come from one distribution? Rank-based, so it cares neither about the
// long right tail of GPU timings nor about their units.
#pragma once

#include <string>
#include <vector>

namespace pebench {

struct MannWhitneyResult {
  double u1 = 0;       // U of the first sample: pairs (x, y) with x > y, ties counting 1/2
  double u2 = 0;       // n1*n2 - u1
  double p_value = 1;  // two-sided
  bool exact = false;  // exact null distribution, else normal approximation
};

// Two-sided test. Without ties and with both samples of at most
// kExactMaxSize values, p comes from the exact distribution of U; otherwise
// from the normal approximation with tie correction and continuity
// correction (as scipy.stats.mannwhitneyu, method "exact"/"asymptotic").
// Either sample empty: p = 1 (no evidence).
inline constexpr size_t kExactMaxSize = 50;
MannWhitneyResult mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y);

// P(U >= u) under the null hypothesis for sample sizes m and n (no ties).
double mann_whitney_exact_sf(double u, size_t m, size_t n);

}  // namespace pebench
