#include "analysis/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace pebench {

double mann_whitney_exact_sf(double u, size_t m, size_t n) {
  // p_{i,j}(k) = P(U = k) for sizes i, j satisfies
  //   p_{i,j}(k) = i/(i+j) p_{i-1,j}(k-j) + j/(i+j) p_{i,j-1}(k)
  // (is the largest value from the first sample or not?). Probabilities, not
  // counts, so nothing overflows; all terms are positive, so nothing cancels.
  // f[i] holds p_{i,j}(.) for the current j; the sweep over j is in place.
  const size_t kmax = m * n;
  std::vector<std::vector<double>> f(m + 1, std::vector<double>(kmax + 1, 0.0));
  for (size_t i = 0; i <= m; ++i) f[i][0] = 1.0;  // j = 0: U = 0 surely
  for (size_t j = 1; j <= n; ++j) {
    // i = 0: U = 0 surely, f[0] unchanged.
    for (size_t i = 1; i <= m; ++i) {
      const double a = static_cast<double>(i) / static_cast<double>(i + j);
      const double b = 1.0 - a;
      std::vector<double>& cur = f[i];  // holds p_{i,j-1}
      const std::vector<double>& below = f[i - 1];  // already p_{i-1,j}
      for (size_t k = i * j + 1; k-- > 0;) {
        const double from_below = k >= j ? below[k - j] : 0.0;
        cur[k] = a * from_below + b * cur[k];
      }
    }
  }
  const auto& p = f[m];
  const double start = std::ceil(u - 1e-9);
  double sf = 0;
  for (size_t k = start < 0 ? 0 : static_cast<size_t>(start); k <= kmax; ++k) sf += p[k];
  return std::min(1.0, sf);
}

MannWhitneyResult mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y) {
  MannWhitneyResult r;
  const size_t n1 = x.size(), n2 = y.size();
  if (n1 == 0 || n2 == 0) return r;
  const size_t n = n1 + n2;

  // Mid-ranks of the pooled sample; tie groups for the variance correction.
  std::vector<std::pair<double, bool>> pooled;  // value, from x
  pooled.reserve(n);
  for (double v : x) pooled.emplace_back(v, true);
  for (double v : y) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  double rank_sum_x = 0;
  double tie_term = 0;  // sum over tie groups of t^3 - t
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double mid_rank = 0.5 * static_cast<double>(i + 1 + j);  // mean of ranks i+1..j
    for (size_t k = i; k < j; ++k) {
      if (pooled[k].second) rank_sum_x += mid_rank;
    }
    tie_term += t * t * t - t;
    i = j;
  }
  const double dn1 = static_cast<double>(n1), dn2 = static_cast<double>(n2), dn = static_cast<double>(n);
  r.u1 = rank_sum_x - dn1 * (dn1 + 1) / 2;
  r.u2 = dn1 * dn2 - r.u1;

  if (tie_term == 0 && n1 <= kExactMaxSize && n2 <= kExactMaxSize) {
    r.exact = true;
    // The null distribution is symmetric: two-sided p is twice the upper tail
    // at the larger of the two U.
    r.p_value = std::min(1.0, 2.0 * mann_whitney_exact_sf(std::max(r.u1, r.u2), n1, n2));
    return r;
  }
  const double mu = dn1 * dn2 / 2;
  const double var = dn1 * dn2 / 12 * ((dn + 1) - tie_term / (dn * (dn - 1)));
  if (var <= 0) {  // every value equal: no evidence of a difference
    r.p_value = 1;
    return r;
  }
  const double z = std::max(0.0, std::fabs(r.u1 - mu) - 0.5) / std::sqrt(var);
  r.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return r;
}

}  // namespace pebench
