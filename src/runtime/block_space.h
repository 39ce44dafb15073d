// BlockSpace: where sub-allocations go inside one device memory block, and
// the rules that size and align them (issue 41's arena). Plain integers and
// no Vulkan calls, so that the placement logic is tested without a device
// (MemoryArenaLayout.*); MemoryArena (memory_arena.h) owns the blocks.
//
// Contract: reserve() returns an offset that is a multiple of `alignment`
// (a power of two) with [offset, offset + size) inside the block and
// overlapping no other live reservation (first fit, lowest offset);
// release() returns a reservation, merging it with free neighbours, so a
// block whose every reservation is released is one free range again.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace pebench {

class BlockSpace {
 public:
  explicit BlockSpace(uint64_t size) : size_(size) { free_[0] = size; }
  std::optional<uint64_t> reserve(uint64_t size, uint64_t alignment);
  // `offset` and `size` exactly as reserve() gave and was asked.
  void release(uint64_t offset, uint64_t size);
  bool empty() const { return free_.size() == 1 && free_.begin()->second == size_; }
  uint64_t size() const { return size_; }
  uint64_t free_bytes() const;

 private:
  uint64_t size_;
  std::map<uint64_t, uint64_t> free_;  // offset -> bytes, never adjacent (merged)
};

// `v` rounded up to a multiple of `a` (a power of two, or 0/1: unchanged).
inline uint64_t align_up(uint64_t v, uint64_t a) { return a <= 1 ? v : (v + a - 1) & ~(a - 1); }

// What one buffer reserves in a block: VkMemoryRequirements' size and
// alignment; in host-visible memory also nonCoherentAtomSize for both, so
// that a flush or invalidation of exactly the buffer's range
// [offset, offset + size) is atom-aligned at both ends (Vulkan's rule for
// VkMappedMemoryRange on memory that is not coherent) and touches no
// neighbour's atoms; and at least kMinAlignment (buffers start on the same
// boundaries whatever the driver's minimum, as when each had its own
// allocation at offset 0: where a buffer lands can move a kernel's time).
struct Placement {
  uint64_t size = 0;
  uint64_t alignment = 1;
};
inline constexpr uint64_t kMinAlignment = 256;
Placement placement_for(uint64_t req_size, uint64_t req_alignment, bool host_visible, uint64_t non_coherent_atom);

// Why a buffer gets a VkDeviceMemory of its own rather than a place in a
// block; kNone: sub-allocate.
// kNoBlock: a new block could not be allocated (out of memory) and the
// buffer alone could.
enum class DedicatedReason { kNone, kRequired, kPreferred, kLargerThanBlock, kNoBlock };
const char* dedicated_reason_name(DedicatedReason r);
DedicatedReason dedicated_reason(bool requires_dedicated, bool prefers_dedicated, uint64_t placement_size,
                                 uint64_t block_size);

// The size of a memory type's blocks: kBlockBytes, at most an eighth of its
// heap (small heaps: a few blocks fill them) and at most
// maxMemoryAllocationSize (0: no limit), never under kMinBlockBytes (the
// best-practices check's small-allocation threshold is 256 KiB) unless the
// heap or that limit is smaller.
inline constexpr uint64_t kBlockBytes = uint64_t{64} << 20;
inline constexpr uint64_t kMinBlockBytes = uint64_t{1} << 20;
uint64_t block_size_for(uint64_t heap_bytes, uint64_t max_allocation_bytes);

}  // namespace pebench
