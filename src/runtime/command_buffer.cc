#include "runtime/command_buffer.h"

#include <atomic>

#include "runtime/buffer.h"
#include "runtime/pipeline.h"
#include "runtime/timestamp_query_pool.h"

namespace pebench {

StatusOr<std::unique_ptr<CommandBuffer>> CommandBuffer::Create(const Device& device) {
  std::unique_ptr<CommandBuffer> self(new CommandBuffer(device));
  VkCommandBufferAllocateInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  info.commandPool = device.command_pool();
  info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  info.commandBufferCount = 1;
  PB_VK_RETURN_IF_ERROR(vkAllocateCommandBuffers(device.handle(), &info, &self->cmd_));
  return self;
}

CommandBuffer::~CommandBuffer() {
  if (device_.lost()) return;  // see Device::lost()
  if (cmd_) vkFreeCommandBuffers(device_.handle(), device_.command_pool(), 1, &cmd_);
}

Status CommandBuffer::begin(Usage usage) {
  VkCommandBufferBeginInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  if (usage == kOneTimeSubmit) info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  PB_VK_RETURN_IF_ERROR(vkBeginCommandBuffer(cmd_, &info));
  usage_ = usage;
  submissions_ = 0;
  return Status();
}

Status CommandBuffer::submit_and_wait() const {
  if (usage_ == kOneTimeSubmit && submissions_ > 0) {
    return Status::error("a one-time-submit command buffer submitted again (record it anew)");
  }
  ++submissions_;
  return device_.submit_and_wait(cmd_);
}

Status CommandBuffer::end() {
  PB_VK_RETURN_IF_ERROR(vkEndCommandBuffer(cmd_));
  return Status();
}

void CommandBuffer::bind(const ComputePipeline& pipeline, VkDescriptorSet set) {
  vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.handle());
  vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout(), 0, 1, &set, 0, nullptr);
}

void CommandBuffer::push_constants(const ComputePipeline& pipeline, const void* data, uint32_t bytes) {
  if (bytes) vkCmdPushConstants(cmd_, pipeline.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, bytes, data);
}

void CommandBuffer::dispatch(uint32_t x, uint32_t y, uint32_t z) { vkCmdDispatch(cmd_, x, y, z); }

namespace {
std::atomic<bool> g_skip_compute_barriers{false};
}  // namespace

void CommandBuffer::set_test_skip_compute_barriers(bool skip) { g_skip_compute_barriers = skip; }

void CommandBuffer::compute_barrier() {
  if (g_skip_compute_barriers) return;
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                          VK_ACCESS_TRANSFER_WRITE_BIT;
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  vkCmdPipelineBarrier(cmd_, stages, stages, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}

void CommandBuffer::host_read_barrier() {
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}

void CommandBuffer::fill(const Buffer& buffer, uint32_t value, VkDeviceSize offset, VkDeviceSize size) {
  vkCmdFillBuffer(cmd_, buffer.handle(), offset, size, value);
}

void CommandBuffer::copy(const Buffer& src, VkDeviceSize src_offset, const Buffer& dst, VkDeviceSize dst_offset,
                         VkDeviceSize bytes) {
  VkBufferCopy region{src_offset, dst_offset, bytes};
  vkCmdCopyBuffer(cmd_, src.handle(), dst.handle(), 1, &region);
}

void CommandBuffer::reset_queries(const TimestampQueryPool& pool) {
  vkCmdResetQueryPool(cmd_, pool.handle(), 0, pool.count());
}

void CommandBuffer::write_timestamp(const TimestampQueryPool& pool, uint32_t query, VkPipelineStageFlagBits stage) {
  vkCmdWriteTimestamp(cmd_, stage, pool.handle(), query);
}

}  // namespace pebench
