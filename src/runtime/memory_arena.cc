#include "runtime/memory_arena.h"

#include <fmt/format.h>

#include <algorithm>

namespace pebench {

StatusOr<std::unique_ptr<MemoryBlock>> MemoryBlock::Create(VkDevice device, uint32_t type, VkDeviceSize size,
                                                           bool map, VkBuffer dedicated_to) {
  std::unique_ptr<MemoryBlock> self(new MemoryBlock(type, size));
  VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
  dedicated.buffer = dedicated_to;
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.pNext = dedicated_to ? &dedicated : nullptr;
  alloc.allocationSize = size;
  alloc.memoryTypeIndex = type;
  PB_VK_RETURN_IF_ERROR(vkAllocateMemory(device, &alloc, nullptr, &self->memory_));
  if (map) {
    if (VkResult r = vkMapMemory(device, self->memory_, 0, VK_WHOLE_SIZE, 0, &self->mapped_); r != VK_SUCCESS) {
      vkFreeMemory(device, self->memory_, nullptr);
      return vk_error("vkMapMemory", r);
    }
  }
  return self;
}

void MemoryBlock::free(VkDevice device) {
  if (mapped_) vkUnmapMemory(device, memory_);
  if (memory_) vkFreeMemory(device, memory_, nullptr);
  mapped_ = nullptr;
  memory_ = VK_NULL_HANDLE;
}

MemoryArena::MemoryArena(VkDevice device, const VkPhysicalDeviceMemoryProperties& props,
                         VkDeviceSize non_coherent_atom, VkDeviceSize max_allocation_size)
    : device_(device), props_(props), atom_(non_coherent_atom), max_allocation_(max_allocation_size) {}

bool MemoryArena::host_visible(uint32_t type) const {
  return props_.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
}

VkDeviceSize MemoryArena::block_size(uint32_t type) const {
  return block_size_for(props_.memoryHeaps[props_.memoryTypes[type].heapIndex].size, max_allocation_);
}

StatusOr<MemoryAllocation> MemoryArena::allocate(VkBuffer buffer, const VkMemoryRequirements& req, uint32_t type,
                                                 bool requires_dedicated, bool prefers_dedicated) {
  std::lock_guard<std::mutex> lock(mu_);
  const Placement p = placement_for(req.size, req.alignment, host_visible(type), atom_);
  const DedicatedReason why = dedicated_reason(requires_dedicated, prefers_dedicated, p.size, block_size(type));
  if (why != DedicatedReason::kNone) return allocate_dedicated(buffer, type, req.size, why);

  MemoryBlock* block = nullptr;
  std::optional<uint64_t> at;
  for (auto& b : blocks_) {
    if (b->type() != type) continue;
    if ((at = b->space().reserve(p.size, p.alignment))) {
      block = b.get();
      break;
    }
  }
  if (!block) {
    auto made = new_block(type);
    if (!made.ok()) {
      // Out of memory for a whole block: the buffer alone may still fit.
      ++stats_.fallbacks;
      return allocate_dedicated(buffer, type, req.size, DedicatedReason::kNoBlock);
    }
    block = made.value();
    at = block->space().reserve(p.size, p.alignment);
    if (!at) return Status::error(fmt::format("a {}-byte buffer does not fit a new block", p.size));
  }
  MemoryAllocation a;
  a.memory = block->memory();
  a.offset = *at;
  a.size = p.size;
  a.flush_size = p.size;
  a.block = block;
  if (block->mapped()) a.mapped = static_cast<char*>(block->mapped()) + *at;
  return a;
}

StatusOr<MemoryBlock*> MemoryArena::new_block(uint32_t type) {
  auto made = MemoryBlock::Create(device_, type, block_size(type), host_visible(type));
  if (!made.ok()) {
    free_empty_blocks();  // other types' empty blocks may share the heap
    made = MemoryBlock::Create(device_, type, block_size(type), host_visible(type));
  }
  PB_RETURN_IF_ERROR(made.status());
  ++stats_.block_allocations;
  blocks_.push_back(std::move(made).value());
  return blocks_.back().get();
}

// VkMemoryDedicatedAllocateInfo: allocationSize is the buffer's own size.
StatusOr<MemoryAllocation> MemoryArena::allocate_dedicated(VkBuffer buffer, uint32_t type, VkDeviceSize size,
                                                           DedicatedReason why) {
  auto made = MemoryBlock::Create(device_, type, size, host_visible(type), buffer);
  if (!made.ok()) {
    free_empty_blocks();
    made = MemoryBlock::Create(device_, type, size, host_visible(type), buffer);
  }
  PB_RETURN_IF_ERROR(made.status());
  ++stats_.dedicated_allocations;
  MemoryAllocation a;
  a.memory = made.value()->memory();
  a.offset = 0;
  a.size = size;
  a.flush_size = VK_WHOLE_SIZE;
  a.mapped = made.value()->mapped();
  a.block = made.value().get();
  a.dedicated = why;
  dedicated_.push_back(std::move(made).value());
  return a;
}

void MemoryArena::release(const MemoryAllocation& a) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = dedicated_.begin(); it != dedicated_.end(); ++it) {
    if (it->get() != a.block) continue;
    (*it)->free(device_);
    dedicated_.erase(it);
    return;
  }
  // A shared block: kept, empty or not, for the next buffers.
  if (a.block) a.block->space().release(a.offset, a.size);
}

void MemoryArena::free_empty_blocks() {
  auto empty = [this](std::unique_ptr<MemoryBlock>& b) {
    if (!b->space().empty()) return false;
    b->free(device_);
    return true;
  };
  blocks_.erase(std::remove_if(blocks_.begin(), blocks_.end(), empty), blocks_.end());
}

void MemoryArena::release_all() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& b : blocks_) b->free(device_);
  for (auto& b : dedicated_) b->free(device_);
  blocks_.clear();
  dedicated_.clear();
}

ArenaStats MemoryArena::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  ArenaStats s = stats_;
  s.blocks = blocks_.size();
  s.dedicated_alive = dedicated_.size();
  return s;
}

}  // namespace pebench
