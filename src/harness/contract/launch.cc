#include "harness/contract/launch.h"

#include <fmt/format.h>

#include <algorithm>

#include "harness/contract/errors.h"
#include "runtime/physical_device.h"

namespace pebench {

LaunchPlanner::LaunchPlanner(const PhysicalDeviceInfo& info)
    : max_invocations_(std::max(1u, info.limits.max_compute_work_group_invocations)),
      max_size_x_(std::max(1u, info.limits.max_compute_work_group_size[0])),
      max_groups_(std::min<uint32_t>(std::max(1u, info.limits.max_compute_work_group_count[0]), 65535u)),
      subgroup_(std::max(1u, info.subgroup.size)),
      max_storage_buffer_range_(info.limits.max_storage_buffer_range),
      is_cpu_(info.type == VK_PHYSICAL_DEVICE_TYPE_CPU) {
  items_per_invocation_ = is_cpu_ ? 4 : 1;
  // 65535 minus a margin for the kernel's own short loops.
  max_loop_iterations_ = info.driver_id == VK_DRIVER_ID_MESA_LLVMPIPE ? 60000 : UINT64_MAX;
}

uint32_t LaunchPlanner::workgroup_size(uint32_t preferred) const {
  uint32_t wg = std::min({std::max(1u, preferred), max_invocations_, max_size_x_});
  if (wg > subgroup_) wg = wg / subgroup_ * subgroup_;
  return wg;
}

uint32_t LaunchPlanner::one_pass_groups(int64_t items, uint32_t workgroup_size) const {
  const int64_t groups = (std::max<int64_t>(items, 1) + workgroup_size - 1) / workgroup_size;
  return groups <= max_groups_ && items <= kOnePassMaxItems ? static_cast<uint32_t>(groups) : 0;
}

uint32_t LaunchPlanner::groups(int64_t items, uint32_t workgroup_size, uint32_t loop_iterations_per_item) const {
  if (items <= 0) return 1;
  const int64_t per_group = static_cast<int64_t>(workgroup_size) * items_per_invocation_;
  const int64_t groups = std::clamp<int64_t>((items + per_group - 1) / per_group, 1, max_groups_);
  const int64_t invocations = groups * workgroup_size;
  // llvmpipe charges a loop of k iterations k + 1 (the exit test counts), so an
  // item costs its grid-stride iteration, its inner iterations and one exit;
  // the grid-stride loop's own exit adds one.
  const uint64_t per_invocation =
      static_cast<uint64_t>((items + invocations - 1) / invocations) * (2 + uint64_t{loop_iterations_per_item}) + 1;
  if (per_invocation > max_loop_iterations_) {
    throw Unsupported(fmt::format(
        "{} items of {} loop iterations each need {} iterations per invocation; this driver stops loops after {}",
        items, 2 + loop_iterations_per_item, per_invocation, max_loop_iterations_));
  }
  return static_cast<uint32_t>(groups);
}

}  // namespace pebench
