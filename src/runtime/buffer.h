// Buffer: a VkBuffer with its own VkDeviceMemory, plus upload/download.
//
// Contract: MemoryUse::kDevice picks device-local memory; on a device whose
// main device-local heap is also host-visible and coherent (integrated GPUs,
// lavapipe) it takes that type and stays mapped, so upload/download are a
// memcpy with no staging copy. Otherwise upload/download go through a
// temporary staging buffer and a copy on the device's queue. Sizes of 0 are
// rounded up to 4 bytes (Vulkan forbids empty buffers).
#pragma once

#include <volk.h>

#include <memory>

#include "runtime/device.h"
#include "runtime/status.h"

namespace pebench {

enum class MemoryUse {
  kDevice,    // kernel operands: device-local (mapped too where memory is unified)
  kStaging,   // host -> device transfers: host-visible, coherent
  kReadback,  // device -> host transfers: host-visible, coherent, cached if possible
};

class Buffer {
 public:
  static StatusOr<std::unique_ptr<Buffer>> Create(const Device& device, VkDeviceSize size, MemoryUse use);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  VkBuffer handle() const { return buffer_; }
  VkDeviceSize size() const { return size_; }
  // Host pointer when the memory is host-visible (always for staging and
  // readback, for kDevice only on unified memory); nullptr otherwise.
  void* mapped() const { return mapped_; }

 private:
  explicit Buffer(const Device& device) : device_(device) {}
  const Device& device_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  VkDeviceSize size_ = 0;
  void* mapped_ = nullptr;
};

// A part of a buffer, as a descriptor binds it (size VK_WHOLE_SIZE: to the end).
struct BufferRange {
  const Buffer* buffer = nullptr;
  VkDeviceSize offset = 0;
  VkDeviceSize size = VK_WHOLE_SIZE;
};

// Copies `bytes` bytes from host memory into `dst` at byte `offset`.
Status upload(const Device& device, Buffer& dst, const void* data, size_t bytes, VkDeviceSize offset = 0);
// Copies `bytes` bytes of `src` from byte `offset` into host memory.
Status download(const Device& device, const Buffer& src, void* data, size_t bytes, VkDeviceSize offset = 0);

}  // namespace pebench
