// Buffer: a VkBuffer bound to memory from the device's arena
// (memory_arena.h: a place in a shared block, or an allocation of its own
// where the spec prefers one or it is larger than a block), plus
// upload/download.
//
// Contract: MemoryUse::kDevice picks device-local memory; on a device whose
// main device-local heap is also host-visible and coherent (integrated GPUs,
// lavapipe) it takes that type and stays mapped, so upload/download are a
// memcpy with no staging copy. Otherwise upload/download go through a
// temporary staging buffer and a copy on the device's queue. Sizes of 0 are
// rounded up to 4 bytes (Vulkan forbids empty buffers).
//
// Host-visible memory need not be coherent (Vulkan guarantees only one
// host-visible coherent type; a readback prefers a cached one, which may not
// be): upload flushes what the host wrote before the device reads it,
// download invalidates before the host reads what the device wrote. A
// buffer in a shared block flushes and invalidates exactly its own range,
// which the arena aligns to nonCoherentAtomSize at both ends; one with an
// allocation of its own names the whole allocation (VK_WHOLE_SIZE from 0).
#pragma once

#include <volk.h>

#include <memory>

#include "runtime/device.h"
#include "runtime/status.h"

namespace pebench {

enum class MemoryUse {
  kDevice,    // kernel operands: device-local (mapped too where memory is unified)
  kStaging,   // host -> device transfers: host-visible, coherent if possible
  kReadback,  // device -> host transfers: host-visible, cached and coherent if possible
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
  // Mapped memory whose host writes and reads need flush()/invalidate()
  // (not HOST_COHERENT, or Device::force_non_coherent()).
  bool coherent() const { return coherent_; }
  // After the host wrote through mapped(): marks the buffer unflushed when
  // it is not coherent (the device refuses submissions until flush()).
  void host_wrote();
  // Makes the host's writes available to the device; nothing when coherent.
  Status flush();
  // Makes the device's writes visible to the host; nothing when coherent.
  Status invalidate() const;
  // Where its memory is (tests, and the reason for an allocation of its own).
  const MemoryAllocation& allocation() const { return alloc_; }

 private:
  explicit Buffer(const Device& device) : device_(device) {}
  VkMappedMemoryRange own_range() const;
  const Device& device_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  MemoryAllocation alloc_;
  bool allocated_ = false;
  VkDeviceSize size_ = 0;
  void* mapped_ = nullptr;
  bool coherent_ = true;
  bool unflushed_ = false;
};

// Test hook (issue 41): while set, flush() does nothing (a forgotten flush),
// which Device::submit_and_wait then reports.
void set_test_skip_flush(bool skip);

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
