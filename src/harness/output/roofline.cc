#include "harness/output/roofline.h"

namespace pebench {

std::optional<Roofline> roofline(const Cost& cost, double median_ns, const Roofs& roofs) {
  if (!(median_ns > 0) || !(roofs.copy_gbps > 0) || !(roofs.f32_gflops > 0)) return std::nullopt;
  const double memory_ns = cost.bytes / roofs.copy_gbps;  // bytes / (bytes per ns)
  const double compute_ns = cost.flops / roofs.f32_gflops;
  Roofline r;
  r.bound = compute_ns > memory_ns ? "compute" : "memory";
  r.model_ns = std::max(memory_ns, compute_ns);
  r.fraction = r.model_ns / median_ns;
  return r;
}

nlohmann::json roofline_to_json(const Roofline& r) {
  return {{"bound", r.bound}, {"fraction", r.fraction}, {"model_ns", r.model_ns}};
}

}  // namespace pebench
