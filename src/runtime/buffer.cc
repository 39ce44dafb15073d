#include "runtime/buffer.h"

#include <fmt/format.h>

#include <atomic>
#include <cstring>
#include <initializer_list>

#include "runtime/command_buffer.h"

namespace pebench {

namespace {

// A device-local type the host cannot map (a discrete GPU's VRAM, not its
// BAR window), else any device-local type; UINT32_MAX if none.
uint32_t device_only_memory_type(const Device& device, uint32_t type_bits) {
  const auto& props = device.memory_properties();
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags flags = props.memoryTypes[i].propertyFlags;
    if ((type_bits & (1u << i)) && (flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) &&
        !(flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) {
      return i;
    }
  }
  return device.find_memory_type(type_bits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
}

// The first type in `type_bits` with all of `required` and the most of
// `wanted`, tried in order (each entry a set of flags); UINT32_MAX if none.
uint32_t pick_memory_type(const Device& device, uint32_t type_bits, VkMemoryPropertyFlags required,
                          std::initializer_list<VkMemoryPropertyFlags> wanted) {
  for (VkMemoryPropertyFlags w : wanted) {
    const uint32_t t = device.find_memory_type(type_bits, required | w);
    if (t != UINT32_MAX) return t;
  }
  return device.find_memory_type(type_bits, required);
}

std::atomic<bool> g_skip_flush{false};

}  // namespace

void set_test_skip_flush(bool skip) { g_skip_flush = skip; }

StatusOr<std::unique_ptr<Buffer>> Buffer::Create(const Device& device, VkDeviceSize size, MemoryUse use) {
  std::unique_ptr<Buffer> self(new Buffer(device));
  self->size_ = size < 4 ? 4 : (size + 3) / 4 * 4;

  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = self->size_;
  // Any buffer may also be bound as a storage texel buffer (a kernel that
  // declares one: SpirvReflection::texel_buffers).
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT |
               VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  PB_VK_RETURN_IF_ERROR(vkCreateBuffer(device.handle(), &info, nullptr, &self->buffer_));

  // VK_KHR_dedicated_allocation (core 1.1): whether the driver wants this
  // buffer in memory of its own.
  VkMemoryDedicatedRequirements dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS};
  VkMemoryRequirements req{};
  if (vkGetBufferMemoryRequirements2) {
    VkBufferMemoryRequirementsInfo2 which{VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2};
    which.buffer = self->buffer_;
    VkMemoryRequirements2 req2{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
    req2.pNext = &dedicated;
    vkGetBufferMemoryRequirements2(device.handle(), &which, &req2);
    req = req2.memoryRequirements;
  } else {
    vkGetBufferMemoryRequirements(device.handle(), self->buffer_, &req);
  }
  const VkMemoryPropertyFlags visible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
  const VkMemoryPropertyFlags coherent = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  const VkMemoryPropertyFlags cached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  const VkMemoryPropertyFlags host = visible | coherent;
  uint32_t type = UINT32_MAX;
  const bool discrete = use == MemoryUse::kDevice && device.memory_mode() == MemoryMode::kDiscrete;
  switch (use) {
    case MemoryUse::kDevice:
      if (discrete) {
        type = device_only_memory_type(device, req.memoryTypeBits);
      } else if (device.info().has_unified_memory) {
        type = device.find_memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host);
      }
      if (type == UINT32_MAX) type = device.find_memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
      if (type == UINT32_MAX) type = device.find_memory_type(req.memoryTypeBits, 0);
      break;
    case MemoryUse::kStaging:
      type = pick_memory_type(device, req.memoryTypeBits, visible, {coherent});
      break;
    case MemoryUse::kReadback:
      // Reads of uncached memory are slow: cached, even where not coherent.
      type = pick_memory_type(device, req.memoryTypeBits, visible, {cached | coherent, cached, coherent});
      break;
  }
  if (type == UINT32_MAX) {
    return Status::error(fmt::format("no suitable memory type for a {}-byte buffer", size),
                         VK_ERROR_FEATURE_NOT_PRESENT);
  }

  auto alloc = device.arena().allocate(self->buffer_, req, type, dedicated.requiresDedicatedAllocation,
                                       dedicated.prefersDedicatedAllocation);
  PB_RETURN_IF_ERROR(alloc.status());
  self->alloc_ = alloc.value();
  self->allocated_ = true;
  PB_VK_RETURN_IF_ERROR(
      vkBindBufferMemory(device.handle(), self->buffer_, self->alloc_.memory, self->alloc_.offset));
  const VkMemoryPropertyFlags flags = device.memory_properties().memoryTypes[type].propertyFlags;
  if ((flags & visible) && !discrete) {
    // The arena maps host-visible memory once; a discrete GPU's kernel
    // buffers are never mapped, whatever the memory could do.
    self->mapped_ = self->alloc_.mapped;
    if (!self->mapped_) return Status::error("host-visible memory that the arena did not map");
    self->coherent_ = (flags & coherent) && !device.force_non_coherent();
  }
  return self;
}

void Buffer::host_wrote() {
  if (coherent_ || unflushed_) return;
  unflushed_ = true;
  device_.note_unflushed(+1);
}

VkMappedMemoryRange Buffer::own_range() const {
  VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
  range.memory = alloc_.memory;
  range.offset = alloc_.offset;
  range.size = alloc_.flush_size;
  return range;
}

Status Buffer::flush() {
  if (!unflushed_ || g_skip_flush) return Status();
  const VkMappedMemoryRange range = own_range();
  PB_VK_RETURN_IF_ERROR(vkFlushMappedMemoryRanges(device_.handle(), 1, &range));
  unflushed_ = false;
  device_.note_unflushed(-1);
  return Status();
}

Status Buffer::invalidate() const {
  if (coherent_ || !mapped_) return Status();
  const VkMappedMemoryRange range = own_range();
  PB_VK_RETURN_IF_ERROR(vkInvalidateMappedMemoryRanges(device_.handle(), 1, &range));
  return Status();
}

Buffer::~Buffer() {
  if (unflushed_) device_.note_unflushed(-1);
  if (device_.lost()) return;  // see Device::lost(): never destroy under running work
  if (buffer_) vkDestroyBuffer(device_.handle(), buffer_, nullptr);
  if (allocated_) device_.arena().release(alloc_);
}

namespace {

// The copy waits for every earlier submission's shader writes (a fence wait
// alone makes nothing visible to the next submission's transfer), and a
// readback's copy is made visible to the host before the fence signals.
Status copy_on_device(const Device& device, const Buffer& src, VkDeviceSize src_offset, const Buffer& dst,
                      VkDeviceSize dst_offset, size_t bytes, bool for_host) {
  auto cmd = CommandBuffer::Create(device);
  PB_RETURN_IF_ERROR(cmd.status());
  CommandBuffer& c = *cmd.value();
  PB_RETURN_IF_ERROR(c.begin(CommandBuffer::kOneTimeSubmit));
  c.compute_barrier();
  c.copy(src, src_offset, dst, dst_offset, bytes);
  if (for_host) c.host_read_barrier();
  PB_RETURN_IF_ERROR(c.end());
  return c.submit_and_wait();
}

}  // namespace

Status upload(const Device& device, Buffer& dst, const void* data, size_t bytes, VkDeviceSize offset) {
  if (bytes == 0) return Status();
  if (offset > dst.size() || bytes > dst.size() - offset) {
    return Status::error(fmt::format("upload of {} bytes at {} into a {}-byte buffer", bytes, offset, dst.size()));
  }
  if (dst.mapped()) {
    std::memcpy(static_cast<char*>(dst.mapped()) + offset, data, bytes);
    dst.host_wrote();
    return dst.flush();
  }
  auto staging = Buffer::Create(device, bytes, MemoryUse::kStaging);
  PB_RETURN_IF_ERROR(staging.status());
  std::memcpy(staging.value()->mapped(), data, bytes);
  staging.value()->host_wrote();
  PB_RETURN_IF_ERROR(staging.value()->flush());
  return copy_on_device(device, *staging.value(), 0, dst, offset, bytes, /*for_host=*/false);
}

Status download(const Device& device, const Buffer& src, void* data, size_t bytes, VkDeviceSize offset) {
  if (bytes == 0) return Status();
  if (offset > src.size() || bytes > src.size() - offset) {
    return Status::error(fmt::format("download of {} bytes at {} from a {}-byte buffer", bytes, offset, src.size()));
  }
  if (src.mapped()) {
    PB_RETURN_IF_ERROR(src.invalidate());
    std::memcpy(data, static_cast<const char*>(src.mapped()) + offset, bytes);
    return Status();
  }
  auto readback = Buffer::Create(device, bytes, MemoryUse::kReadback);
  PB_RETURN_IF_ERROR(readback.status());
  PB_RETURN_IF_ERROR(copy_on_device(device, src, offset, *readback.value(), 0, bytes, /*for_host=*/true));
  PB_RETURN_IF_ERROR(readback.value()->invalidate());
  std::memcpy(data, readback.value()->mapped(), bytes);
  return Status();
}

}  // namespace pebench
