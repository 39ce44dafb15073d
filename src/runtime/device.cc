#include "runtime/device.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace pebench {

const char* memory_mode_name(MemoryMode mode) { return mode == MemoryMode::kDiscrete ? "discrete" : "host"; }

StatusOr<std::unique_ptr<Device>> Device::Create(const Instance& instance, const PhysicalDeviceInfo& info) {
  std::unique_ptr<Device> self(new Device(info));
  vkGetPhysicalDeviceMemoryProperties(info.handle, &self->memory_);
  if (info.type == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) self->memory_mode_ = MemoryMode::kDiscrete;
  const bool v12 = info.api_version >= VK_API_VERSION_1_2;
  const bool v13 = info.api_version >= VK_API_VERSION_1_3;
  const DeviceFeatures& has = info.features;
  DeviceFeatures& on = self->enabled_;

  std::vector<const char*> extensions;
  VkPhysicalDeviceFeatures2 feats2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDevice16BitStorageFeatures s16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDeviceShaderFloat16Int8Features f16i8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDevice8BitStorageFeatures s8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  VkPhysicalDeviceSubgroupSizeControlFeatures sizectl{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR exec_props{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  void** tail = &feats2.pNext;
  auto chain = [&tail](auto& s) {
    *tail = &s;
    tail = &s.pNext;
  };

  if (has.shader_int64) feats2.features.shaderInt64 = on.shader_int64 = true;
  if (has.storage_buffer_16bit) {  // core in 1.1
    s16.storageBuffer16BitAccess = on.storage_buffer_16bit = true;
    chain(s16);
  }
  if (has.shader_float16 || has.shader_int8) {
    if (!v12) extensions.push_back(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
    f16i8.shaderFloat16 = on.shader_float16 = has.shader_float16;
    f16i8.shaderInt8 = on.shader_int8 = has.shader_int8;
    chain(f16i8);
  }
  if (has.storage_buffer_8bit) {
    if (!v12) extensions.push_back(VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
    s8.storageBuffer8BitAccess = on.storage_buffer_8bit = true;
    chain(s8);
  }
  if (has.subgroup_size_control) {
    if (!v13) extensions.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
    sizectl.subgroupSizeControl = on.subgroup_size_control = true;
    sizectl.computeFullSubgroups = on.compute_full_subgroups = has.compute_full_subgroups;
    chain(sizectl);
  }
  if (has.pipeline_executable_info) {
    extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    exec_props.pipelineExecutableInfo = on.pipeline_executable_info = true;
    chain(exec_props);
  }
  on.storage_texel_rgba32f = has.storage_texel_rgba32f;  // format properties: nothing to enable
  on.storage_texel_rgba16f = has.storage_texel_rgba16f;
  on.storage_texel_r32f = has.storage_texel_r32f;
  // Portability drivers (MoltenVK) require this extension to be enabled.
  if (info.has_extension("VK_KHR_portability_subset")) extensions.push_back("VK_KHR_portability_subset");

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = info.compute_queue_family;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;

  VkDeviceCreateInfo create{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  create.pNext = &feats2;
  create.queueCreateInfoCount = 1;
  create.pQueueCreateInfos = &queue_info;
  create.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  create.ppEnabledExtensionNames = extensions.data();
  PB_VK_RETURN_IF_ERROR(vkCreateDevice(info.handle, &create, nullptr, &self->device_));
  vkGetDeviceQueue(self->device_, info.compute_queue_family, 0, &self->queue_);
  VkPhysicalDeviceProperties props{};
  vkGetPhysicalDeviceProperties(info.handle, &props);  // the driver's own atom, whatever a profile says
  self->arena_ = std::make_unique<MemoryArena>(self->device_, self->memory_, props.limits.nonCoherentAtomSize,
                                               info.limits.max_memory_allocation_size);

  VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = info.compute_queue_family;
  PB_VK_RETURN_IF_ERROR(vkCreateCommandPool(self->device_, &pool, nullptr, &self->command_pool_));

  VkPipelineCacheCreateInfo cache{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  PB_VK_RETURN_IF_ERROR(vkCreatePipelineCache(self->device_, &cache, nullptr, &self->pipeline_cache_));

  // A device without fences cannot execute (Mesa's null hardware devices,
  // RADV_FORCE_FAMILY): it still compiles pipelines, which is what
  // --compile-only needs, so it is opened and says why it cannot run.
  VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (VkResult r = vkCreateFence(self->device_, &fence, nullptr, &self->fence_); r != VK_SUCCESS) {
    self->fence_ = VK_NULL_HANDLE;
    self->cannot_execute_ = fmt::format("it cannot execute work (vkCreateFence: {})", vk_result_name(r));
  }
  (void)instance;
  return self;
}

void Device::wait_idle() const {
  // Nothing ever submitted: nothing to wait for, and a device that cannot
  // execute (or one half made) must not be called into.
  if (device_ == VK_NULL_HANDLE || lost_ || !submitted_) return;
  vkDeviceWaitIdle(device_);
}

Device::~Device() {
  if (device_ == VK_NULL_HANDLE) return;
  if (lost_) return;  // work may still be running: leaking beats destroying it (or hanging in vkDeviceWaitIdle)
  wait_idle();
  if (arena_) arena_->release_all();
  if (fence_) vkDestroyFence(device_, fence_, nullptr);
  if (pipeline_cache_) vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
  if (command_pool_) vkDestroyCommandPool(device_, command_pool_, nullptr);
  vkDestroyDevice(device_, nullptr);
}

uint32_t Device::find_memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                                  VkMemoryPropertyFlags preferred) const {
  uint32_t fallback = UINT32_MAX;
  for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
    if (!(type_bits & (1u << i))) continue;
    const VkMemoryPropertyFlags flags = memory_.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return i;
    if (fallback == UINT32_MAX) fallback = i;
  }
  return fallback;
}

namespace {
// Seconds to a fence timeout without float-to-integer overflow (undefined
// behaviour for NaN or past 2^64 ns): NaN and anything that large wait
// without limit, zero or less not at all.
uint64_t timeout_ns(double seconds) {
  const double ns = seconds * 1e9;
  if (!(ns < 18446744073709551616.0)) return UINT64_MAX;  // also NaN
  return ns > 0 ? static_cast<uint64_t>(ns) : 0;
}
}  // namespace

Status Device::submit_and_wait(VkCommandBuffer cmd) const {
  if (lost_) {
    return Status::error("the device is unusable after an earlier timeout or device loss", VK_ERROR_DEVICE_LOST);
  }
  if (!can_execute()) return Status::error("the device " + cannot_execute_, VK_ERROR_FEATURE_NOT_PRESENT);
  if (unflushed_writes_ > 0) {
    return Status::error(fmt::format("{} buffer(s) of non-coherent host memory written by the host and not flushed "
                                     "before a submission (vkFlushMappedMemoryRanges)",
                                     unflushed_writes_),
                         VK_ERROR_UNKNOWN);
  }
  submitted_ = true;
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;
  PB_VK_RETURN_IF_ERROR(vkResetFences(device_, 1, &fence_));
  VkResult r = vkQueueSubmit(queue_, 1, &submit, fence_);
  const double bound = first_runs_ > 0 ? std::max(submit_timeout_s_, kFirstRunWaitS) : submit_timeout_s_;
  if (r == VK_SUCCESS) r = vkWaitForFences(device_, 1, &fence_, VK_TRUE, timeout_ns(bound));
  if (r == VK_TIMEOUT) {
    // Let the work end before the next submission reuses the fence and the
    // buffers: then the device is usable again; if it never ends, it is lost.
    const VkResult drained = vkWaitForFences(device_, 1, &fence_, VK_TRUE, timeout_ns(kDrainS));
    lost_ = drained != VK_SUCCESS;
    return Status::error(fmt::format("vkWaitForFences: VK_TIMEOUT: the device did not finish within {} s{}", bound,
                                     lost_ ? fmt::format(", nor in {} s more; the device is unusable", kDrainS)
                                           : "; it finished later and the device stays usable"),
                         VK_TIMEOUT);
  }
  if (r == VK_ERROR_DEVICE_LOST) lost_ = true;
  if (r != VK_SUCCESS) return vk_error("vkQueueSubmit/vkWaitForFences", r);
  return Status();
}

}  // namespace pebench
