// The device's measured roofs, in the manner of clpeak and vkpeak
// (interface.md, `pebench peak`): read+write copy bandwidth, f32 and f16 FMA
// throughput, each from small kernels under shaders/peak/ timed with GPU
// timestamps.
//
// Copy: two buffers as large as the device allows up to 64 MiB each (past a
// CPU's L3 or a GPU's L2), and on CPU devices also 8 MiB ones (what its L3
// serves kernels of tens of MB from), copied through vec4 views with several
// unroll factors and workgroup counts; each configuration's median, and the
// best one is the roof. FMA: vec4 chains (so a CPU device's
// SIMD width counts) on many workgroups, the work grown until one
// submission takes `target_s`. Ratios between kernels are what the numbers
// are for: the machine is measured as it is at that moment.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "harness/engine/gpu_context.h"
#include "harness/output/roofline.h"

namespace pebench {

struct PeakOptions {
  double target_s = 0.01;  // grow each measurement's work until one submission takes this long
  int samples = 5;         // timed submissions per configuration (median)
};

struct CopyConfig {
  uint32_t unroll = 1;                // vec4 copies per loop iteration
  uint32_t items_per_invocation = 1;  // vec4s per invocation, over the whole copy
  uint32_t groups = 0;
  double buffer_bytes = 0;  // each of the two buffers
  double gbps = 0;  // median
  bool one_pass = false;  // unroll == items_per_invocation and one grid covers the buffer: no loop
};

struct DevicePeak {
  Roofs roofs;
  std::string f16_reason;  // why roofs.f16_gflops is absent
  double copy_buffer_bytes = 0;  // each of the two buffers, the large size
  std::vector<CopyConfig> copy_configs;
  std::string timing;  // "gpu-timestamp" or "wall-clock"
};

// Throws StatusError when the device fails.
DevicePeak measure_peak(GpuContext& ctx, const PeakOptions& options = {});

// What shaders/peak/peak_fma.comp does per invocation and loop iteration:
// kPeakFmaChains vec4 chains of kPeakFmaSteps FMAs (2 flops per lane each).
inline constexpr uint32_t kPeakFmaChains = 8, kPeakFmaSteps = 16;
// The FMA chain constants: a <- a * b + c.
inline constexpr float kPeakFmaB = 1.0f - 1.0f / 1024, kPeakFmaC = 1.0f / 2048;  // exact in f16 too

// The kernels once, on small inputs, for tests that check they do the work
// they are credited with: the copy kernel's output for `src` (whole vec4s),
// and the FMA kernel's per-invocation results (the chains' sum, one vec4 per
// invocation; `arithmetic` picks the f32 or f16 build).
std::vector<float> peak_copy_output(GpuContext& ctx, const std::vector<float>& src, uint32_t unroll,
                                    uint32_t items_per_invocation);
std::vector<float> peak_fma_output(GpuContext& ctx, DType arithmetic, uint32_t groups, uint32_t iters);

// The report's `devices[].peak` object.
nlohmann::json peak_to_json(const DevicePeak& peak);

}  // namespace pebench
