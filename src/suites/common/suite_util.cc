#include "suites/common/suite_util.h"

#include <fmt/format.h>

#include <cstdint>
#include <limits>

namespace pebench {

void require_u32_items(int64_t items, const std::string& what) {
  if (items > static_cast<int64_t>(UINT32_MAX)) {
    throw CaseRejected(fmt::format("{} has {} elements; kernels index with 32 bits", what, items));
  }
}

int int_param_value(const Params& p, const std::string& key) {
  const int64_t v = p.i(key);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
    throw CaseRejected(fmt::format("{}={} is out of range", key, v));
  }
  return static_cast<int>(v);
}

Tolerance rounding_tolerance(DType dtype, double ops, const std::string& model) {
  Tolerance t;
  const double u = dtype == DType::kF16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -24);
  const double per_element = dtype == DType::kF16 ? u : ops * u;
  t.nmse = 4.0 * per_element * per_element + 1e-14;
  t.model = model;
  return t;
}

double trig_nmse(double signal_rms2) {
  const double e = std::ldexp(1.0, -11);
  return e * e / signal_rms2;
}

}  // namespace pebench
