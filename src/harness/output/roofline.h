// The roofline model (interface.md, "rooflines"): a device's two roofs,
// measured by `pebench peak` (harness/engine/peak.h), and where a case sits under
// them. The model's time for a case is the longer of its bytes at the copy
// bandwidth and its flops at the FMA throughput; the case's fraction is that
// time over its median time, so 1.0 means the case runs at the roof.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "harness/contract/variant.h"

namespace pebench {

struct Roofs {
  double copy_gbps = 0;   // read+write bandwidth, bytes per ns
  double f32_gflops = 0;  // f32 FMA throughput (2 flops per FMA)
  std::optional<double> f16_gflops;  // absent when the device has no f16 arithmetic
};

struct Roofline {
  std::string bound;    // "memory" or "compute"
  double fraction = 0;  // model time / median time
  double model_ns = 0;  // the time the roofline model allows
};

// Every pebench kernel computes in f32 whatever its storage dtype
// (shaders/common/storage.glsl), so the compute roof is the f32 one for
// every case. Absent when the roofs or the median are not positive.
std::optional<Roofline> roofline(const Cost& cost, double median_ns, const Roofs& roofs);

nlohmann::json roofline_to_json(const Roofline& r);

}  // namespace pebench
