#include "runtime/block_space.h"

#include <algorithm>
#include <iterator>

namespace pebench {

std::optional<uint64_t> BlockSpace::reserve(uint64_t size, uint64_t alignment) {
  if (size == 0) size = 1;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const uint64_t begin = it->first;
    const uint64_t end = begin + it->second;
    const uint64_t at = align_up(begin, alignment);
    if (at < begin || at > end || end - at < size) continue;  // (at < begin: overflow)
    // Split the free range into what lies before `at` and after the reservation.
    free_.erase(it);
    if (at > begin) free_[begin] = at - begin;
    if (at + size < end) free_[at + size] = end - (at + size);
    return at;
  }
  return std::nullopt;
}

void BlockSpace::release(uint64_t offset, uint64_t size) {
  if (size == 0) size = 1;
  auto next = free_.lower_bound(offset);
  uint64_t begin = offset;
  uint64_t end = offset + size;
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == begin) {
      begin = prev->first;
      free_.erase(prev);
    }
  }
  if (next != free_.end() && next->first == end) {
    end += next->second;
    free_.erase(next);
  }
  free_[begin] = end - begin;
}

uint64_t BlockSpace::free_bytes() const {
  uint64_t n = 0;
  for (const auto& [offset, bytes] : free_) n += bytes;
  return n;
}

Placement placement_for(uint64_t req_size, uint64_t req_alignment, bool host_visible, uint64_t non_coherent_atom) {
  Placement p;
  p.alignment = std::max<uint64_t>({req_alignment, kMinAlignment, 1});
  p.size = req_size;
  if (host_visible && non_coherent_atom > 1) {
    p.alignment = std::max(p.alignment, non_coherent_atom);
    p.size = align_up(p.size, non_coherent_atom);
  }
  return p;
}

const char* dedicated_reason_name(DedicatedReason r) {
  switch (r) {
    case DedicatedReason::kNone: return "sub-allocated";
    case DedicatedReason::kRequired: return "requiresDedicatedAllocation";
    case DedicatedReason::kPreferred: return "prefersDedicatedAllocation";
    case DedicatedReason::kLargerThanBlock: return "larger than a block";
    case DedicatedReason::kNoBlock: return "no memory for a new block";
  }
  return "?";
}

DedicatedReason dedicated_reason(bool requires_dedicated, bool prefers_dedicated, uint64_t placement_size,
                                 uint64_t block_size) {
  if (requires_dedicated) return DedicatedReason::kRequired;
  if (prefers_dedicated) return DedicatedReason::kPreferred;
  if (placement_size > block_size) return DedicatedReason::kLargerThanBlock;
  return DedicatedReason::kNone;
}

uint64_t block_size_for(uint64_t heap_bytes, uint64_t max_allocation_bytes) {
  uint64_t size = kBlockBytes;
  if (heap_bytes > 0) size = std::min(size, std::max(heap_bytes / 8, std::min(kMinBlockBytes, heap_bytes)));
  if (max_allocation_bytes > 0) size = std::min(size, max_allocation_bytes);
  return size;
}

}  // namespace pebench
