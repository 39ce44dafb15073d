#include "runtime/timestamp_query_pool.h"

#include <fmt/format.h>

namespace pebench {

StatusOr<std::unique_ptr<TimestampQueryPool>> TimestampQueryPool::Create(const Device& device, uint32_t count) {
  if (!device.info().timestamps_supported()) {
    return Status::error(fmt::format("{}: the compute queue has no timestamps (timestampValidBits 0)",
                                     device.info().name),
                         VK_ERROR_FEATURE_NOT_PRESENT);
  }
  std::unique_ptr<TimestampQueryPool> self(new TimestampQueryPool(device));
  self->count_ = count;
  self->clock_ = device.timestamp_clock();
  VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  info.queryCount = count;
  PB_VK_RETURN_IF_ERROR(vkCreateQueryPool(device.handle(), &info, nullptr, &self->pool_));
  return self;
}

TimestampQueryPool::~TimestampQueryPool() {
  if (device_.lost()) return;  // see Device::lost()
  if (pool_) vkDestroyQueryPool(device_.handle(), pool_, nullptr);
}

StatusOr<std::vector<uint64_t>> TimestampQueryPool::results() const {
  std::vector<uint64_t> ticks(count_);
  PB_VK_RETURN_IF_ERROR(vkGetQueryPoolResults(device_.handle(), pool_, 0, count_, ticks.size() * sizeof(uint64_t),
                                              ticks.data(), sizeof(uint64_t),
                                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  for (auto& t : ticks) t &= clock_.mask();
  return ticks;
}

}  // namespace pebench
