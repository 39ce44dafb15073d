// CommandBuffer: a primary command buffer from the device's pool, with the
// handful of commands compute benchmarking needs, and a blocking submit.
//
// Contract: a recorded buffer may be submitted any number of times, one
// submission at a time, unless begin(kOneTimeSubmit) recorded it
// (VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT: uploads, readbacks, fills,
// which best practices asks for): then a second submission is an error.
// submit_and_wait() waits on a fence. compute_barrier() makes all earlier shader/transfer writes visible to
// later shader/transfer reads and writes.
#pragma once

#include <volk.h>

#include <memory>

#include "runtime/device.h"
#include "runtime/status.h"

namespace pebench {

class Buffer;
class ComputePipeline;
class TimestampQueryPool;

class CommandBuffer {
 public:
  static StatusOr<std::unique_ptr<CommandBuffer>> Create(const Device& device);
  ~CommandBuffer();
  CommandBuffer(const CommandBuffer&) = delete;
  CommandBuffer& operator=(const CommandBuffer&) = delete;

  VkCommandBuffer handle() const { return cmd_; }

  enum Usage { kReusable, kOneTimeSubmit };
  Status begin(Usage usage = kReusable);
  Status end();
  void bind(const ComputePipeline& pipeline, VkDescriptorSet set);
  void push_constants(const ComputePipeline& pipeline, const void* data, uint32_t bytes);
  void dispatch(uint32_t x, uint32_t y = 1, uint32_t z = 1);
  void compute_barrier();
  // Test hook (issue 41): while set, compute_barrier() records nothing, so
  // that synchronization validation's report of the hazard can be tested.
  static void set_test_skip_compute_barriers(bool skip);
  // Shader and transfer writes before it become visible to the host once
  // the submission's fence signals (a readback).
  void host_read_barrier();
  // Fills `size` bytes (a multiple of 4, or VK_WHOLE_SIZE) from byte `offset` with `value`.
  void fill(const Buffer& buffer, uint32_t value, VkDeviceSize offset = 0, VkDeviceSize size = VK_WHOLE_SIZE);
  void copy(const Buffer& src, const Buffer& dst, VkDeviceSize bytes) { copy(src, 0, dst, 0, bytes); }
  void copy(const Buffer& src, VkDeviceSize src_offset, const Buffer& dst, VkDeviceSize dst_offset, VkDeviceSize bytes);
  void reset_queries(const TimestampQueryPool& pool);
  void write_timestamp(const TimestampQueryPool& pool, uint32_t query, VkPipelineStageFlagBits stage);

  Status submit_and_wait() const;

 private:
  explicit CommandBuffer(const Device& device) : device_(device) {}
  const Device& device_;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  Usage usage_ = kReusable;
  mutable int submissions_ = 0;  // since the last begin()
};

}  // namespace pebench
