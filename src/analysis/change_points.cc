#include "analysis/change_points.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <utility>

namespace pebench {
namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Mid-ranks (1-based) of v.
std::vector<double> ranks_of(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double mid = 0.5 * (double(i + 1) + double(j + 1));
    for (size_t k = i; k <= j; ++k) r[idx[k]] = mid;
    i = j + 1;
  }
  return r;
}

// The split t (left = [0, t)) with the largest |z| of U over ranks r, and that z.
std::pair<size_t, double> best_split(const std::vector<double>& r, size_t m) {
  const size_t n = r.size();
  double left = 0;
  size_t best = 0;
  double best_z = 0;
  for (size_t t = 1; t + m <= n; ++t) {
    left += r[t - 1];
    if (t < m) continue;
    const double n1 = double(t), n2 = double(n - t);
    const double u = left - n1 * (n1 + 1) / 2;  // U of the left side: large when the left is slower
    const double z = (u - n1 * n2 / 2) / std::sqrt(n1 * n2 * (double(n) + 1) / 12);
    if (std::fabs(z) > std::fabs(best_z)) {
      best_z = z;
      best = t;
    }
  }
  return {best, -best_z};  // positive: the right side (after) is slower
}

}  // namespace

std::vector<ChangePoint> change_points(const std::vector<double>& series, const ChangePointOptions& options) {
  const size_t m = std::max<size_t>(options.min_segment, 1);
  std::vector<ChangePoint> out;
  std::mt19937_64 rng(options.seed);
  std::vector<std::pair<size_t, size_t>> todo{{0, series.size()}};
  while (!todo.empty()) {
    const auto [lo, hi] = todo.back();
    todo.pop_back();
    if (hi - lo < 2 * m) continue;
    const std::vector<double> seg(series.begin() + lo, series.begin() + hi);
    std::vector<double> r = ranks_of(seg);
    const auto [t, z] = best_split(r, m);
    if (t == 0) continue;
    size_t reach = 0;
    for (size_t b = 0; b < options.permutations; ++b) {
      std::shuffle(r.begin(), r.end(), rng);
      if (std::fabs(best_split(r, m).second) >= std::fabs(z) - 1e-12) ++reach;
    }
    const double p = double(reach + 1) / double(options.permutations + 1);
    if (p >= options.alpha) continue;
    const double before = median_of({seg.begin(), seg.begin() + t});
    const double after = median_of({seg.begin() + t, seg.end()});
    const double step = before > 0 ? after / before - 1 : 0;
    if (std::fabs(step) < options.min_step) continue;
    out.push_back({lo + t, before, after, step, p, z});
    todo.push_back({lo, lo + t});
    todo.push_back({lo + t, hi});
  }
  std::sort(out.begin(), out.end(), [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  // Medians each side of a point are those of its neighbouring segments
  // once all points are known.
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t a = i == 0 ? 0 : out[i - 1].index, b = out[i].index;
    const size_t c = i + 1 < out.size() ? out[i + 1].index : series.size();
    out[i].before = median_of({series.begin() + a, series.begin() + b});
    out[i].after = median_of({series.begin() + b, series.begin() + c});
    out[i].step = out[i].before > 0 ? out[i].after / out[i].before - 1 : 0;
  }
  return out;
}

}  // namespace pebench
