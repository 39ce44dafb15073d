// TimestampQueryPool: GPU timestamps for timing command sequences.
//
// Contract: results() waits for the queries and returns raw ticks masked to
// the queue family's timestampValidBits; convert differences with the
// device's TimestampClock (period as a double, wrap-around handled). Create()
// fails when the compute queue has no timestamps: callers then fall back to
// wall-clock timing and must record that they did.
#pragma once

#include <volk.h>

#include <memory>
#include <vector>

#include "runtime/device.h"
#include "runtime/status.h"

namespace pebench {

class TimestampQueryPool {
 public:
  static StatusOr<std::unique_ptr<TimestampQueryPool>> Create(const Device& device, uint32_t count);
  ~TimestampQueryPool();
  TimestampQueryPool(const TimestampQueryPool&) = delete;
  TimestampQueryPool& operator=(const TimestampQueryPool&) = delete;

  VkQueryPool handle() const { return pool_; }
  uint32_t count() const { return count_; }
  const TimestampClock& clock() const { return clock_; }

  // All `count` timestamps (waits until available), masked to the valid bits.
  StatusOr<std::vector<uint64_t>> results() const;
  // Nanoseconds between queries `begin` and `end` of the last results().
  double elapsed_ns(const std::vector<uint64_t>& ticks, uint32_t begin, uint32_t end) const {
    return clock_.elapsed_ns(ticks[begin], ticks[end]);
  }

 private:
  explicit TimestampQueryPool(const Device& device) : device_(device) {}
  const Device& device_;
  VkQueryPool pool_ = VK_NULL_HANDLE;
  uint32_t count_ = 0;
  TimestampClock clock_;
};

}  // namespace pebench
