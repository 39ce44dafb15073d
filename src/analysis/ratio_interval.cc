#include "analysis/ratio_interval.h"

#include <algorithm>
#include <cmath>

#include "analysis/mann_whitney.h"

namespace pebench {
namespace {

constexpr size_t kMaxPairs = size_t{1} << 22;
constexpr size_t kReducedSize = 2048;

// `n` evenly spaced order statistics of sorted `v` (its first and last kept).
std::vector<double> order_statistics(const std::vector<double>& v, size_t n) {
  std::vector<double> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(v[i * (v.size() - 1) / (n - 1)]);
  return out;
}

// The standard normal quantile at p in (0, 1), by bisection on erfc: the
// interval needs three digits, and this has no table to get wrong.
double normal_quantile(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// The largest k >= 1 with P(U <= k - 1) <= alpha / 2, or 0: the interval is
// [d_(k), d_(mn + 1 - k)] of the mn sorted pairwise differences.
size_t critical_rank(size_t m, size_t n, double alpha, bool exact) {
  const double mn = static_cast<double>(m) * static_cast<double>(n);
  if (exact) {
    // U is symmetric about mn / 2: P(U <= c) = P(U >= mn - c). The bound
    // has a little slack, so that 1 - 0.9 in floating point still admits the
    // 90% interval of 3 and 3 samples (P(U <= 0) = 1/20 exactly).
    const double bound = alpha / 2 * (1 + 1e-9);
    size_t k = 0;
    while (k + 1 <= mn / 2 && mann_whitney_exact_sf(mn - static_cast<double>(k), m, n) <= bound) ++k;
    return k;
  }
  const double sd = std::sqrt(mn * static_cast<double>(m + n + 1) / 12);
  const double k = std::floor(mn / 2 - normal_quantile(1 - alpha / 2) * sd);
  return k < 1 ? 0 : static_cast<size_t>(k);
}

bool all_positive_finite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double s) { return std::isfinite(s) && s > 0; });
}

// What both intervals need: samples on each side, every one a positive,
// finite time, and a level strictly between 0 and 1.
bool usable(const std::vector<double>& x, const std::vector<double>& y, double confidence) {
  return !x.empty() && !y.empty() && all_positive_finite(x) && all_positive_finite(y) && confidence > 0 &&
         confidence < 1;
}

// The largest k >= 1 with P(B <= k - 1) <= alpha / 2 for B ~ Binomial(n, 1/2),
// or 0: the sign test's interval is [d_(k), d_(n + 1 - k)].
size_t sign_test_rank(size_t n, double alpha) {
  const double bound = alpha / 2 * (1 + 1e-9);  // slack as in critical_rank
  double cdf = 0;
  size_t k = 0;
  for (; k + 1 <= n / 2; ++k) {
    // P(B = k), through logarithms: C(n, k) / 2^n underflows past n ~ 1000.
    const double dn = static_cast<double>(n), dk = static_cast<double>(k);
    cdf += std::exp(std::lgamma(dn + 1) - std::lgamma(dk + 1) - std::lgamma(dn - dk + 1) - dn * std::log(2.0));
    if (cdf > bound) break;
  }
  return k;
}

}  // namespace

std::optional<RatioInterval> paired_ratio_interval(const std::vector<double>& x, const std::vector<double>& x_started,
                                                   const std::vector<double>& y, const std::vector<double>& y_started,
                                                   double confidence) {
  if (!usable(x, y, confidence)) return std::nullopt;
  if (x_started.size() != x.size() || y_started.size() != y.size()) return std::nullopt;
  const size_t k = sign_test_rank(y.size(), 1 - confidence);
  if (k == 0) return std::nullopt;
  // x's samples by start time, to find each y sample's nearest.
  std::vector<size_t> order(x.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x_started[a] < x_started[b]; });
  std::vector<double> d, gaps;
  for (size_t j = 0; j < y.size(); ++j) {
    const double t = y_started[j];
    auto it = std::lower_bound(order.begin(), order.end(), t, [&](size_t i, double v) { return x_started[i] < v; });
    size_t best = it == order.end() ? order.back() : *it;
    if (it != order.begin() && std::fabs(x_started[*std::prev(it)] - t) < std::fabs(x_started[best] - t)) {
      best = *std::prev(it);
    }
    d.push_back(std::log(y[j]) - std::log(x[best]));
    gaps.push_back(std::fabs(x_started[best] - t));
  }
  std::sort(d.begin(), d.end());
  std::sort(gaps.begin(), gaps.end());
  auto median = [](const std::vector<double>& v) {
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  RatioInterval r;
  r.estimate = std::exp(median(d));
  r.lo = std::exp(d[k - 1]);
  r.hi = std::exp(d[d.size() - k]);
  r.confidence = confidence;
  r.exact = true;
  r.paired = true;
  r.median_gap_ns = median(gaps);
  return r;
}

std::optional<RatioInterval> ratio_interval(std::vector<double> x, std::vector<double> y, double confidence) {
  if (!usable(x, y, confidence)) return std::nullopt;
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  if (x.size() * y.size() > kMaxPairs) {
    if (x.size() > kReducedSize) x = order_statistics(x, kReducedSize);
    if (y.size() > kReducedSize) y = order_statistics(y, kReducedSize);
  }
  const size_t m = x.size(), n = y.size();
  const bool exact = m <= kExactMaxSize && n <= kExactMaxSize;
  const size_t k = critical_rank(m, n, 1 - confidence, exact);
  if (k == 0) return std::nullopt;

  std::vector<double> d;
  d.reserve(m * n);
  for (double xi : x) {
    for (double yj : y) d.push_back(std::log(yj) - std::log(xi));
  }
  // The median and the k-th smallest and largest pairwise differences.
  auto nth = [&d](size_t i) {
    std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(i), d.end());
    return d[i];
  };
  const size_t count = d.size();
  const double upper_mid = nth(count / 2);
  const double median = count % 2 ? upper_mid : 0.5 * (upper_mid + nth(count / 2 - 1));
  RatioInterval r;
  r.lo = std::exp(nth(k - 1));
  r.hi = std::exp(nth(count - k));
  r.estimate = std::exp(median);
  r.confidence = confidence;
  r.exact = exact;
  return r;
}

}  // namespace pebench
