#include "harness/engine/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace pebench {

std::vector<int64_t> sample_rows(int64_t total_rows, double row_cost, double budget) {
  std::vector<int64_t> rows;
  if (total_rows <= 0) return rows;
  const double cost = std::max(row_cost, 1.0);
  if (static_cast<double>(total_rows) * cost <= budget) {
    rows.resize(static_cast<size_t>(total_rows));
    for (int64_t r = 0; r < total_rows; ++r) rows[static_cast<size_t>(r)] = r;
    return rows;
  }
  const int64_t want = std::max<int64_t>(8, static_cast<int64_t>(budget / cost));
  const int64_t k = std::min(want, total_rows);
  for (int64_t i = 0; i < k; ++i) {
    // Evenly spaced over [0, total_rows-1], endpoints included.
    rows.push_back(k == 1 ? 0 : i * (total_rows - 1) / (k - 1));
  }
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

std::optional<std::string> unrepresentable_output(const Reference& ref) {
  for (const auto& out : ref.outputs()) {
    const DType t = out.desc.dtype;
    if (t != DType::kF32 && t != DType::kF16) continue;
    const double largest = t == DType::kF16 ? 65504.0 : static_cast<double>(std::numeric_limits<float>::max());
    // What rounds to inf: from the largest finite value plus half its ulp.
    const double overflow = t == DType::kF16 ? 65520.0 : 0x1.ffffffp127;
    const int64_t len = out.desc.row_length();
    // The lowest such element, so that the message does not depend on the map's order.
    int64_t at = -1;
    double value = 0;
    for (const auto& [r, expected] : out.rows) {
      for (int64_t c = 0; c < len; ++c) {
        const double e = expected[static_cast<size_t>(c)];
        if (!(std::fabs(e) < overflow) && (at < 0 || r * len + c < at)) {
          at = r * len + c;
          value = e;
        }
      }
    }
    if (at >= 0) {
      return fmt::format("the exact {}[{}] = {:.3g} is past {}'s largest finite value ({:.6g}): the dtype cannot "
                         "represent this case",
                         out.desc.name, at, value, dtype_name(t), largest);
    }
  }
  return std::nullopt;
}

ValidationResult compare_outputs(const Reference& ref, const TensorMap& tensors, const Tolerance& tol) {
  ValidationResult v;
  v.ran = true;
  v.tolerance = tol;
  double err2 = 0, ref2 = 0, max_ref = 0;
  double worst = -1;
  std::string worst_at;
  std::string nan_at;
  for (const auto& out : ref.outputs()) {
    const HostTensor& got = tensors.at(out.desc.name);
    const int64_t len = out.desc.row_length();
    for (const auto& [r, expected] : out.rows) {
      for (int64_t c = 0; c < len; ++c) {
        const int64_t idx = r * len + c;
        const double g = got.get(idx);
        const double e = expected[static_cast<size_t>(c)];
        ++v.elements_checked;
        if (!std::isfinite(g) || !std::isfinite(e)) {
          if (nan_at.empty()) {
            nan_at = fmt::format("{}[{}] = {} (expected {})", out.desc.name, idx, g, e);
          }
          continue;
        }
        const double d = std::fabs(g - e);
        err2 += d * d;
        ref2 += e * e;
        max_ref = std::max(max_ref, std::fabs(e));
        if (d > worst) {
          worst = d;
          worst_at = fmt::format("{}[{}] = {} (expected {})", out.desc.name, idx, g, e);
        }
        v.max_abs = std::max(v.max_abs, d);
      }
    }
  }
  v.nmse = ref2 > 0 ? err2 / ref2 : (err2 > 0 ? INFINITY : 0.0);
  v.max_rel = max_ref > 0 ? v.max_abs / max_ref : (v.max_abs > 0 ? INFINITY : 0.0);
  if (!nan_at.empty()) {
    v.passed = false;
    v.nmse = NAN;
    v.detail = "non-finite value: " + nan_at;
  } else if (v.elements_checked == 0) {
    v.passed = false;
    v.detail = "the reference computed no rows";
  } else {
    v.passed = v.nmse <= tol.nmse && (tol.max_rel <= 0 || v.max_rel <= tol.max_rel);
    if (!v.passed) {
      v.detail = fmt::format("nmse {:.3g} (tolerance {:.3g}), max_rel {:.3g}; worst: {}", v.nmse, tol.nmse,
                             v.max_rel, worst_at);
    }
  }
  return v;
}

}  // namespace pebench
