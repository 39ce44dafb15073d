#include "runtime/buffer.h"

#include <fmt/format.h>

#include <cstring>

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

}  // namespace

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

  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(device.handle(), self->buffer_, &req);
  const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
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
      type = device.find_memory_type(req.memoryTypeBits, host);
      break;
    case MemoryUse::kReadback:
      type = device.find_memory_type(req.memoryTypeBits, host, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
      break;
  }
  if (type == UINT32_MAX) {
    return Status::error(fmt::format("no suitable memory type for a {}-byte buffer", size),
                         VK_ERROR_FEATURE_NOT_PRESENT);
  }

  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = type;
  PB_VK_RETURN_IF_ERROR(vkAllocateMemory(device.handle(), &alloc, nullptr, &self->memory_));
  PB_VK_RETURN_IF_ERROR(vkBindBufferMemory(device.handle(), self->buffer_, self->memory_, 0));
  const VkMemoryPropertyFlags flags = device.memory_properties().memoryTypes[type].propertyFlags;
  if ((flags & host) == host && !discrete) {
    PB_VK_RETURN_IF_ERROR(vkMapMemory(device.handle(), self->memory_, 0, VK_WHOLE_SIZE, 0, &self->mapped_));
  }
  return self;
}

Buffer::~Buffer() {
  if (device_.lost()) return;  // see Device::lost(): never destroy under running work
  if (mapped_) vkUnmapMemory(device_.handle(), memory_);
  if (buffer_) vkDestroyBuffer(device_.handle(), buffer_, nullptr);
  if (memory_) vkFreeMemory(device_.handle(), memory_, nullptr);
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
  PB_RETURN_IF_ERROR(c.begin());
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
    return Status();
  }
  auto staging = Buffer::Create(device, bytes, MemoryUse::kStaging);
  PB_RETURN_IF_ERROR(staging.status());
  std::memcpy(staging.value()->mapped(), data, bytes);
  return copy_on_device(device, *staging.value(), 0, dst, offset, bytes, /*for_host=*/false);
}

Status download(const Device& device, const Buffer& src, void* data, size_t bytes, VkDeviceSize offset) {
  if (bytes == 0) return Status();
  if (offset > src.size() || bytes > src.size() - offset) {
    return Status::error(fmt::format("download of {} bytes at {} from a {}-byte buffer", bytes, offset, src.size()));
  }
  if (src.mapped()) {
    std::memcpy(data, static_cast<const char*>(src.mapped()) + offset, bytes);
    return Status();
  }
  auto readback = Buffer::Create(device, bytes, MemoryUse::kReadback);
  PB_RETURN_IF_ERROR(readback.status());
  PB_RETURN_IF_ERROR(copy_on_device(device, src, offset, *readback.value(), 0, bytes, /*for_host=*/true));
  std::memcpy(data, readback.value()->mapped(), bytes);
  return Status();
}

}  // namespace pebench
