#include "runtime/buffer.h"

#include <fmt/format.h>

#include <cstring>

#include "runtime/command_buffer.h"

namespace pebench {

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
  switch (use) {
    case MemoryUse::kDevice:
      if (device.info().has_unified_memory) {
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
  if ((flags & host) == host) {
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

Status copy_on_device(const Device& device, const Buffer& src, VkDeviceSize src_offset, const Buffer& dst,
                      VkDeviceSize dst_offset, size_t bytes) {
  auto cmd = CommandBuffer::Create(device);
  PB_RETURN_IF_ERROR(cmd.status());
  CommandBuffer& c = *cmd.value();
  PB_RETURN_IF_ERROR(c.begin());
  c.copy(src, src_offset, dst, dst_offset, bytes);
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
  return copy_on_device(device, *staging.value(), 0, dst, offset, bytes);
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
  PB_RETURN_IF_ERROR(copy_on_device(device, src, offset, *readback.value(), 0, bytes));
  std::memcpy(data, readback.value()->mapped(), bytes);
  return Status();
}

}  // namespace pebench
