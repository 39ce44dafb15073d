// LaunchPlanner: workgroup sizes and counts chosen from the device.
//
// Kernels in pebench loop over their work ("grid-stride"), so the group count
// is a choice. Measured on lavapipe (abs.learned, 2M elements; see
// docs/lavapipe.md): 1-4 items per invocation is fastest, 16 or more is 2-3x
// slower (each loop iteration pays llvmpipe's mask bookkeeping), and very few
// groups starve its threads. So CPU devices get about 4 items per
// invocation, GPUs one, both capped at 65535 groups.
//
// llvmpipe also stops every loop of an invocation, silently, once the
// invocation has run 65535 loop iterations in total (all loops together:
// LP_MAX_TGSI_LOOP_ITERATIONS in gallivm). groups() therefore takes the loop
// iterations each item costs and throws Unsupported where even the most
// groups would leave an invocation past max_loop_iterations().
#pragma once

#include <cstdint>

#include "runtime/device_limits.h"

namespace pebench {

struct PhysicalDeviceInfo;

class LaunchPlanner {
 public:
  // What one execution of a loop of `iterations` iterations takes from
  // llvmpipe's budget: the exit test counts too, and a loop in a branch no
  // lane takes still runs it (measured with abs.recurrent: a step holding a
  // one-iteration loop costs 3, and the kernel stops after 65535 / 3 steps).
  static constexpr uint64_t loop_cost(uint64_t iterations) { return iterations + 1; }

  explicit LaunchPlanner(const PhysicalDeviceInfo& info);

  // `preferred` clamped to maxComputeWorkGroupInvocations and
  // maxComputeWorkGroupSize.x, rounded down to a multiple of the subgroup
  // size when it is larger than one.
  uint32_t workgroup_size(uint32_t preferred = 256) const;
  // Groups for a grid-stride loop over `items`, each item running
  // `loop_iterations_per_item` iterations of the kernel's inner loops. The
  // budget counts llvmpipe's way: a loop of k iterations costs k + 1.
  uint32_t groups(int64_t items, uint32_t workgroup_size, uint32_t loop_iterations_per_item = 0) const;
  // Groups of `workgroup_size` invocations, one item each, where that many
  // groups may be launched and the items stay below kOnePassMaxItems: the
  // kernel then needs no grid-stride loop (on lavapipe a loop around memory
  // accesses costs, docs/lavapipe.md) and may divide item indices in float
  // (one_pass_div in common/grid.glsl); 0 otherwise.
  static constexpr int64_t kOnePassMaxItems = int64_t{1} << 24;
  uint32_t one_pass_groups(int64_t items, uint32_t workgroup_size) const;
  // Loop iterations one invocation may run in total (llvmpipe: 65535, with a
  // safety margin; others: unlimited).
  uint64_t max_loop_iterations() const { return max_loop_iterations_; }
  uint32_t items_per_invocation() const { return items_per_invocation_; }
  uint32_t max_groups() const { return max_groups_; }
  uint32_t subgroup_size() const { return subgroup_; }
  bool is_cpu() const { return is_cpu_; }
  // maxStorageBufferRange: the most bytes one storage-buffer binding may
  // cover (a table a case may choose to write, e.g. DeBERTa's).
  uint64_t max_storage_buffer_range() const { return max_storage_buffer_range_; }

 private:
  uint32_t max_invocations_;
  uint32_t max_size_x_;
  uint32_t max_groups_;
  uint32_t subgroup_;
  uint32_t items_per_invocation_;
  uint64_t max_loop_iterations_;
  uint64_t max_storage_buffer_range_;
  bool is_cpu_;
};

}  // namespace pebench
