// MemoryArena: sub-allocation of buffers from a few VkDeviceMemory blocks
// per memory type (issue 41; Debian 12 packages no Vulkan Memory Allocator).
//
// Contract: allocate() places a buffer in a block of its memory type at an
// offset that meets VkMemoryRequirements::alignment (and, in host-visible
// memory, nonCoherentAtomSize at both ends: block_space.h), making a new
// block (kBlockBytes, fewer on small heaps) when none has room. A buffer
// gets a VkDeviceMemory of its own (VkMemoryDedicatedAllocateInfo) only
// where VK_KHR_dedicated_allocation (core 1.1) says requiresDedicated or
// prefersDedicated, or where it is larger than a block; release() frees
// such an allocation at once. Blocks stay when their last buffer goes, so
// the next case reuses them (NVIDIA's ReuseAllocations), and are freed by
// release_all() at device teardown. When a new block cannot be allocated
// (out of device or host memory), the empty blocks of every type are freed
// and the block tried again, then an allocation of just the buffer's size;
// only if that fails too is the error returned (the case then reports it,
// `unsupported` for memory). Host-visible blocks are mapped once, for their
// lifetime. Not thread-safe beyond its own lock: one Device, one arena.
#pragma once

#include <volk.h>

#include <memory>
#include <mutex>
#include <vector>

#include "runtime/block_space.h"
#include "runtime/status.h"

namespace pebench {

// One VkDeviceMemory and the space left in it; mapped for its lifetime
// when its type is host-visible.
class MemoryBlock {
 public:
  static StatusOr<std::unique_ptr<MemoryBlock>> Create(VkDevice device, uint32_t type, VkDeviceSize size, bool map,
                                                       VkBuffer dedicated_to = VK_NULL_HANDLE);
  MemoryBlock(const MemoryBlock&) = delete;
  MemoryBlock& operator=(const MemoryBlock&) = delete;
  // Frees the memory (unmapping it first); the arena calls it, never a
  // destructor, so that a lost device's memory is left alone.
  void free(VkDevice device);

  VkDeviceMemory memory() const { return memory_; }
  uint32_t type() const { return type_; }
  void* mapped() const { return mapped_; }
  BlockSpace& space() { return space_; }

 private:
  MemoryBlock(uint32_t type, VkDeviceSize size) : type_(type), space_(size) {}
  uint32_t type_;
  BlockSpace space_;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  void* mapped_ = nullptr;
};

// Where a buffer's memory is.
struct MemoryAllocation {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;       // bytes reserved (atom-aligned in host-visible memory)
  // The range a flush or invalidation of the whole buffer names: `size`
  // in a shared block (atom-aligned), VK_WHOLE_SIZE in an allocation of
  // its own (its size is the buffer's, which need not be).
  VkDeviceSize flush_size = 0;
  void* mapped = nullptr;      // the host's pointer to `offset`, when the type is host-visible
  MemoryBlock* block = nullptr;
  DedicatedReason dedicated = DedicatedReason::kNone;  // kNone: in a shared block
};

// What the arena did, for tests and for the documentation's figures.
struct ArenaStats {
  uint64_t blocks = 0;               // blocks alive
  uint64_t block_allocations = 0;    // vkAllocateMemory calls for blocks, ever
  uint64_t dedicated_allocations = 0;
  uint64_t dedicated_alive = 0;
  uint64_t fallbacks = 0;            // buffers given an allocation of their own after a block failed
};

class MemoryArena {
 public:
  MemoryArena(VkDevice device, const VkPhysicalDeviceMemoryProperties& props, VkDeviceSize non_coherent_atom,
              VkDeviceSize max_allocation_size);
  MemoryArena(const MemoryArena&) = delete;
  MemoryArena& operator=(const MemoryArena&) = delete;

  // `req` and the dedicated flags from vkGetBufferMemoryRequirements2.
  StatusOr<MemoryAllocation> allocate(VkBuffer buffer, const VkMemoryRequirements& req, uint32_t type,
                                      bool requires_dedicated, bool prefers_dedicated);
  void release(const MemoryAllocation& a);
  // Frees every block (device teardown; every buffer gone).
  void release_all();
  ArenaStats stats() const;
  VkDeviceSize block_size(uint32_t type) const;
  VkDeviceSize non_coherent_atom() const { return atom_; }

 private:
  StatusOr<MemoryAllocation> allocate_dedicated(VkBuffer buffer, uint32_t type, VkDeviceSize size,
                                                DedicatedReason why);
  StatusOr<MemoryBlock*> new_block(uint32_t type);
  void free_empty_blocks();
  bool host_visible(uint32_t type) const;

  VkDevice device_;
  VkPhysicalDeviceMemoryProperties props_;
  VkDeviceSize atom_;
  VkDeviceSize max_allocation_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<MemoryBlock>> blocks_;     // shared blocks, every type
  std::vector<std::unique_ptr<MemoryBlock>> dedicated_;  // one buffer each
  ArenaStats stats_;
};

}  // namespace pebench
