// Helpers shared by suite files: tensor declarations, grid-stride dispatches,
// common tolerances.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/contract/variant.h"

namespace pebench {

// a / b rounded up, for positive a and b.
inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline TensorDesc tensor(std::string name, TensorRole role, DType dtype, std::vector<int64_t> shape, std::string doc) {
  return TensorDesc{std::move(name), role, dtype, std::move(shape), std::move(doc)};
}

// A 1-D grid-stride dispatch of `shader` over `items` work items, each
// costing `loop_iterations_per_item` inner-loop iterations: workgroup size
// from the device (spec constant 0, local_size_x_id in common/grid.glsl),
// group count from the planner.
inline Dispatch grid_dispatch(const Recorder& rec, std::string shader, std::vector<std::string> buffers, int64_t items,
                              PushConstants push, uint32_t loop_iterations_per_item = 0, uint32_t preferred_wg = 256) {
  const uint32_t wg = rec.launch().workgroup_size(preferred_wg);
  Dispatch d;
  d.shader = std::move(shader);
  d.buffers = std::move(buffers);
  d.constant("local_size_x", wg);
  d.push = std::move(push);
  d.groups = {rec.launch().groups(items, wg, loop_iterations_per_item), 1, 1};
  return d;
}

// Launches `d` (a grid_dispatch) in one pass where the device allows it:
// one invocation per `unroll` of its `items` (LaunchPlanner::one_pass_groups)
// and spec constant ONE_PASS on, so the kernel runs no grid-stride loop;
// otherwise d keeps its groups and ONE_PASS is off. Returns which.
inline bool launch_one_pass(const Recorder& rec, Dispatch& d, int64_t items, uint32_t unroll = 1) {
  const uint32_t groups = rec.launch().one_pass_groups(ceil_div(items, int64_t{unroll}), d.spec_constants[0]);
  if (groups) d.groups[0] = groups;
  d.constant("ONE_PASS", groups ? 1u : 0u);
  return groups != 0;
}

// Throws CaseRejected unless `items` fits the uint32 index space of the
// kernels.
void require_u32_items(int64_t items, const std::string& what);

// Integer parameter `key` as an int; CaseRejected naming the value when it
// does not fit.
int int_param_value(const Params& p, const std::string& key);

// Tolerance of a kernel whose only error is rounding in f32 arithmetic plus
// the output's storage rounding: `ops` roundings of 2^-24 each (f32), or the
// f16 output rounding (2^-11, squared for nmse), with a 4x margin.
Tolerance rounding_tolerance(DType dtype, double ops, const std::string& model);

// Adds the error of `transcendental` Vulkan-precision sin/cos (absolute
// error 2^-11 on [-pi, pi] is all the spec guarantees) to an nmse bound,
// relative to signal energy `signal_rms2` per element.
double trig_nmse(double signal_rms2);

}  // namespace pebench
