#include "runtime/physical_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace pebench {

const char* vendor_name(uint32_t vendor_id) {
  switch (vendor_id) {
    case 0x1002: return "AMD";
    case 0x1010: return "Imagination";
    case 0x10DE: return "NVIDIA";
    case 0x13B5: return "ARM";
    case 0x14E4: return "Broadcom";
    case 0x5143: return "Qualcomm";
    case 0x8086: return "Intel";
    case 0x106B: return "Apple";
    case 0x144D: return "Samsung";
    case 0x19E5: return "Huawei";
    case 0x1AE0: return "Google";
    case 0x1E0F: return "Moore Threads";
    case 0x0000: return "unknown";
    // Khronos-assigned vendor ids (VkVendorId) for vendors without a PCI id.
    case VK_VENDOR_ID_VIV: return "Vivante";
    case VK_VENDOR_ID_VSI: return "VeriSilicon";
    case VK_VENDOR_ID_KAZAN: return "Kazan (software)";
    case VK_VENDOR_ID_CODEPLAY: return "Codeplay";
    case VK_VENDOR_ID_MESA: return "Mesa software";
    case VK_VENDOR_ID_POCL: return "PoCL";
    case 0x10007: return "Mobileye";  // VK_VENDOR_ID_MOBILEYE (headers after 1.3.239)
    default: return "unknown";
  }
}

namespace {
std::vector<std::string> flag_names(uint32_t flags, std::initializer_list<std::pair<uint32_t, const char*>> names) {
  std::vector<std::string> out;
  for (const auto& [bit, name] : names) {
    if (flags & bit) {
      out.push_back(name);
      flags &= ~bit;
    }
  }
  for (uint32_t bit = 1; bit != 0; bit <<= 1) {
    if (flags & bit) out.push_back(fmt::format("0x{:x}", bit));
  }
  return out;
}
}  // namespace

std::vector<std::string> subgroup_operation_names(uint32_t flags) {
  return flag_names(flags, {{VK_SUBGROUP_FEATURE_BASIC_BIT, "basic"},
                            {VK_SUBGROUP_FEATURE_VOTE_BIT, "vote"},
                            {VK_SUBGROUP_FEATURE_ARITHMETIC_BIT, "arithmetic"},
                            {VK_SUBGROUP_FEATURE_BALLOT_BIT, "ballot"},
                            {VK_SUBGROUP_FEATURE_SHUFFLE_BIT, "shuffle"},
                            {VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT, "shuffle_relative"},
                            {VK_SUBGROUP_FEATURE_CLUSTERED_BIT, "clustered"},
                            {VK_SUBGROUP_FEATURE_QUAD_BIT, "quad"},
                            {VK_SUBGROUP_FEATURE_PARTITIONED_BIT_NV, "partitioned_nv"}});
}

std::vector<std::string> memory_heap_flag_names(uint32_t flags) {
  return flag_names(flags, {{VK_MEMORY_HEAP_DEVICE_LOCAL_BIT, "device_local"},
                            {VK_MEMORY_HEAP_MULTI_INSTANCE_BIT, "multi_instance"}});
}

std::vector<std::string> memory_property_names(uint32_t flags) {
  return flag_names(flags, {{VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, "device_local"},
                            {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "host_visible"},
                            {VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, "host_coherent"},
                            {VK_MEMORY_PROPERTY_HOST_CACHED_BIT, "host_cached"},
                            {VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT, "lazily_allocated"},
                            {VK_MEMORY_PROPERTY_PROTECTED_BIT, "protected"},
                            {VK_MEMORY_PROPERTY_DEVICE_COHERENT_BIT_AMD, "device_coherent_amd"},
                            {VK_MEMORY_PROPERTY_DEVICE_UNCACHED_BIT_AMD, "device_uncached_amd"},
                            {VK_MEMORY_PROPERTY_RDMA_CAPABLE_BIT_NV, "rdma_capable_nv"}});
}

std::string uuid_string(const uint8_t (&u)[VK_UUID_SIZE]) {
  std::string out;
  for (uint32_t i = 0; i < VK_UUID_SIZE; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", u[i]);
  }
  return out;
}

const char* device_type_name(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "cpu";
    default:
      return "other";
  }
}

std::string api_version_string(uint32_t v) {
  return fmt::format("{}.{}.{}", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
}

std::string driver_version_string(uint32_t vendor_id, VkDriverId driver_id, uint32_t v) {
  if (vendor_id == 0x10DE) {  // NVIDIA
    return fmt::format("{}.{}.{}.{}", (v >> 22) & 0x3ff, (v >> 14) & 0xff, (v >> 6) & 0xff, v & 0x3f);
  }
  if (vendor_id == 0x8086 && driver_id == VK_DRIVER_ID_INTEL_PROPRIETARY_WINDOWS) {
    return fmt::format("{}.{}", v >> 14, v & 0x3fff);
  }
  return fmt::format("{}.{}.{}", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
}

namespace {
// Appends `s` to a pNext chain whose last pNext is *tail.
template <typename T>
void chain(void**& tail, T& s) {
  *tail = &s;
  tail = &s.pNext;
}
}  // namespace

static_assert(kSubgroupFeatureShuffle == VK_SUBGROUP_FEATURE_SHUFFLE_BIT, "device_limits.h names the shuffle bit");

namespace {

// What the device can be asked: each optional struct is chained only where
// the device's API version or extensions say it knows it.
struct QuerySupport {
  bool v11, driver_props, size_control, f16i8, storage_8bit, integer_dot, exec_props;
};

QuerySupport query_support(const PhysicalDeviceInfo& info) {
  const uint32_t v = info.api_version;
  const bool v12 = v >= VK_API_VERSION_1_2;
  const bool v13 = v >= VK_API_VERSION_1_3;
  QuerySupport s;
  s.v11 = v >= VK_API_VERSION_1_1;
  s.driver_props = v12 || info.has_extension(VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
  s.size_control = v13 || info.has_extension(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  s.f16i8 = v12 || info.has_extension(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  s.storage_8bit = v12 || info.has_extension(VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
  s.integer_dot = v13 || info.has_extension(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  s.exec_props = info.has_extension(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  return s;
}

Status query_extensions(VkPhysicalDevice device, PhysicalDeviceInfo& info) {
  uint32_t ext_count = 0;
  PB_VK_RETURN_IF_ERROR(vkEnumerateDeviceExtensionProperties(device, nullptr, &ext_count, nullptr));
  std::vector<VkExtensionProperties> exts(ext_count);
  PB_VK_RETURN_IF_ERROR(vkEnumerateDeviceExtensionProperties(device, nullptr, &ext_count, exts.data()));
  for (const auto& e : exts) info.extensions.insert(e.extensionName);
  return Status();
}

void copy_limits(const VkPhysicalDeviceLimits& l, const VkPhysicalDeviceMaintenance3Properties& maint3,
                 DeviceLimits& limits) {
  limits.max_compute_shared_memory_size = l.maxComputeSharedMemorySize;
  limits.max_compute_work_group_invocations = l.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    limits.max_compute_work_group_size[i] = l.maxComputeWorkGroupSize[i];
    limits.max_compute_work_group_count[i] = l.maxComputeWorkGroupCount[i];
  }
  limits.max_storage_buffer_range = l.maxStorageBufferRange;
  limits.max_push_constants_size = l.maxPushConstantsSize;
  limits.min_storage_buffer_offset_alignment = l.minStorageBufferOffsetAlignment;
  limits.max_per_stage_descriptor_storage_buffers = l.maxPerStageDescriptorStorageBuffers;
  limits.max_bound_descriptor_sets = l.maxBoundDescriptorSets;
  limits.max_uniform_buffer_range = l.maxUniformBufferRange;
  limits.max_per_stage_resources = l.maxPerStageResources;
  limits.max_per_stage_descriptor_storage_images = l.maxPerStageDescriptorStorageImages;
  limits.max_texel_buffer_elements = l.maxTexelBufferElements;
  limits.min_texel_buffer_offset_alignment = l.minTexelBufferOffsetAlignment;
  limits.max_memory_allocation_size = maint3.maxMemoryAllocationSize;
  limits.timestamp_period = l.timestampPeriod;
}

// Identity, driver, subgroup and limits: properties, chaining only what
// this device knows. Returns whether 4x8-bit packed dot products are
// accelerated (a property that counts only with the feature).
bool query_properties(VkPhysicalDevice device, const QuerySupport& support, PhysicalDeviceInfo& info) {
  VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceMaintenance3Properties maint3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceSubgroupSizeControlProperties size_control{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  props2.pNext = &subgroup;
  subgroup.pNext = &maint3;
  void** tail = &maint3.pNext;
  if (support.driver_props) chain(tail, driver);
  if (support.size_control) chain(tail, size_control);
  VkPhysicalDeviceIDProperties ids{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  if (support.v11) chain(tail, ids);
  VkPhysicalDeviceShaderIntegerDotProductProperties dot_props{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES};
  if (support.integer_dot) chain(tail, dot_props);
  vkGetPhysicalDeviceProperties2(device, &props2);

  const VkPhysicalDeviceProperties& p = props2.properties;
  info.name = p.deviceName;
  info.vendor_id = p.vendorID;
  info.device_id = p.deviceID;
  info.type = p.deviceType;
  info.driver_version_raw = p.driverVersion;
  std::copy(std::begin(p.pipelineCacheUUID), std::end(p.pipelineCacheUUID), std::begin(info.pipeline_cache_uuid));
  if (support.v11) {
    std::copy(std::begin(ids.deviceUUID), std::end(ids.deviceUUID), std::begin(info.device_uuid));
    std::copy(std::begin(ids.driverUUID), std::end(ids.driverUUID), std::begin(info.driver_uuid));
  }
  if (support.driver_props) {
    const VkConformanceVersion& c = driver.conformanceVersion;
    info.conformance_version = fmt::format("{}.{}.{}.{}", c.major, c.minor, c.subminor, c.patch);
    info.driver_id = driver.driverID;
    info.driver_name = driver.driverName;
    info.driver_info = driver.driverInfo;
  }
  info.subgroup.size = subgroup.subgroupSize;
  info.subgroup.min_size = subgroup.subgroupSize;
  info.subgroup.max_size = subgroup.subgroupSize;
  info.subgroup.supported_operations = subgroup.supportedOperations;
  info.subgroup.supported_in_compute = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  if (support.size_control && size_control.minSubgroupSize > 0) {
    info.subgroup.min_size = size_control.minSubgroupSize;
    info.subgroup.max_size = size_control.maxSubgroupSize;
  }
  copy_limits(p.limits, maint3, info.limits);
  return dot_props.integerDotProduct4x8BitPackedSignedAccelerated ||
         dot_props.integerDotProduct4x8BitPackedUnsignedAccelerated;
}

// Whether `format` can back a storage texel buffer (a format property).
bool storage_texel_buffer_format(VkPhysicalDevice device, VkFormat format) {
  VkFormatProperties props{};
  vkGetPhysicalDeviceFormatProperties(device, format, &props);
  return (props.bufferFeatures & VK_FORMAT_FEATURE_STORAGE_TEXEL_BUFFER_BIT) != 0;
}

// Features, same rule as the properties.
void query_features(VkPhysicalDevice device, const QuerySupport& support, bool dot_4x8_accelerated,
                    PhysicalDeviceInfo& info) {
  VkPhysicalDeviceFeatures2 feats2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDevice16BitStorageFeatures f16storage{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDeviceShaderFloat16Int8Features f16i8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDevice8BitStorageFeatures s8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  VkPhysicalDeviceSubgroupSizeControlFeatures sizectl{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  feats2.pNext = &f16storage;
  void** tail = &f16storage.pNext;
  if (support.f16i8) chain(tail, f16i8);
  if (support.storage_8bit) chain(tail, s8);
  if (support.size_control) chain(tail, sizectl);
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR exec_props{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  if (support.exec_props) chain(tail, exec_props);
  VkPhysicalDeviceShaderIntegerDotProductFeatures dot{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  if (support.integer_dot) chain(tail, dot);
  vkGetPhysicalDeviceFeatures2(device, &feats2);
  info.features.integer_dot_product = support.integer_dot && dot.shaderIntegerDotProduct;
  info.features.integer_dot_product_4x8_accelerated = info.features.integer_dot_product && dot_4x8_accelerated;
  // Debian 12's Vulkan headers (1.3.239) predate VK_KHR_cooperative_matrix
  // and VK_KHR_shader_bfloat16, so their feature structs cannot be chained
  // here: the extension being advertised is what is recorded.
  info.features.cooperative_matrix =
      info.has_extension("VK_KHR_cooperative_matrix") || info.has_extension("VK_NV_cooperative_matrix");
  info.features.bfloat16 = info.has_extension("VK_KHR_shader_bfloat16");
  info.features.storage_buffer_16bit = f16storage.storageBuffer16BitAccess;
  info.features.shader_float16 = support.f16i8 && f16i8.shaderFloat16;
  info.features.shader_int8 = support.f16i8 && f16i8.shaderInt8;
  info.features.storage_buffer_8bit = support.storage_8bit && s8.storageBuffer8BitAccess;
  info.features.subgroup_size_control = support.size_control && sizectl.subgroupSizeControl;
  info.features.compute_full_subgroups = support.size_control && sizectl.computeFullSubgroups;
  info.features.shader_int64 = feats2.features.shaderInt64;
  info.features.shader_float64 = feats2.features.shaderFloat64;
  info.features.pipeline_executable_info = support.exec_props && exec_props.pipelineExecutableInfo;
  info.features.storage_texel_rgba32f = storage_texel_buffer_format(device, VK_FORMAT_R32G32B32A32_SFLOAT);
  info.features.storage_texel_rgba16f = storage_texel_buffer_format(device, VK_FORMAT_R16G16B16A16_SFLOAT);
  info.features.storage_texel_r32f = storage_texel_buffer_format(device, VK_FORMAT_R32_SFLOAT);
}

// Compute queue: prefer a compute-only family (async compute), else any with compute.
Status find_compute_queue(VkPhysicalDevice device, uint32_t index, PhysicalDeviceInfo& info) {
  uint32_t qcount = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(device, &qcount, nullptr);
  std::vector<VkQueueFamilyProperties> families(qcount);
  vkGetPhysicalDeviceQueueFamilyProperties(device, &qcount, families.data());
  for (uint32_t pass = 0; pass < 2 && info.compute_queue_family == UINT32_MAX; ++pass) {
    for (uint32_t i = 0; i < qcount; ++i) {
      const bool compute = families[i].queueFlags & VK_QUEUE_COMPUTE_BIT;
      const bool graphics = families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT;
      if (compute && (pass == 1 || !graphics)) {
        info.compute_queue_family = i;
        info.timestamp_valid_bits = families[i].timestampValidBits;
        break;
      }
    }
  }
  if (info.compute_queue_family == UINT32_MAX) {
    return Status::error(fmt::format("device {} ({}) has no compute queue", index, info.name),
                         VK_ERROR_FEATURE_NOT_PRESENT);
  }
  return Status();
}

// Heaps, types, the largest device-local heap and whether memory is unified.
void query_memory(VkPhysicalDevice device, PhysicalDeviceInfo& info) {
  VkPhysicalDeviceMemoryProperties mem{};
  vkGetPhysicalDeviceMemoryProperties(device, &mem);
  for (uint32_t h = 0; h < mem.memoryHeapCount; ++h) {
    info.memory_heaps.push_back({mem.memoryHeaps[h].size, mem.memoryHeaps[h].flags});
  }
  for (uint32_t t = 0; t < mem.memoryTypeCount; ++t) {
    info.memory_types.push_back({mem.memoryTypes[t].heapIndex, mem.memoryTypes[t].propertyFlags});
  }
  info.device_local_heap_bytes = largest_device_local_heap(info.memory_heaps);
  info.has_unified_memory = is_unified_memory(info.type, info.memory_heaps, info.memory_types);
}

}  // namespace

StatusOr<PhysicalDeviceInfo> query_physical_device(VkPhysicalDevice device, uint32_t index) {
  PhysicalDeviceInfo info;
  info.index = index;
  info.handle = device;
  PB_RETURN_IF_ERROR(query_extensions(device, info));
  VkPhysicalDeviceProperties base{};
  vkGetPhysicalDeviceProperties(device, &base);
  info.api_version = base.apiVersion;
  const QuerySupport support = query_support(info);
  const bool dot_4x8_accelerated = query_properties(device, support, info);
  query_features(device, support, dot_4x8_accelerated, info);
  PB_RETURN_IF_ERROR(find_compute_queue(device, index, info));
  query_memory(device, info);
  return info;
}

uint64_t largest_device_local_heap(const std::vector<MemoryHeap>& heaps) {
  uint64_t largest = 0;
  for (const auto& h : heaps) {
    if (h.flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) largest = std::max<uint64_t>(largest, h.size);
  }
  return largest;
}

bool is_unified_memory(VkPhysicalDeviceType type, const std::vector<MemoryHeap>& heaps,
                       const std::vector<MemoryType>& types) {
  // A discrete GPU's host-visible device-local type is its PCIe BAR window,
  // whatever its size: resizable BAR spans the whole heap (an NVIDIA H100
  // shows all 85.5 GB of it), and host reads through it cross the bus.
  if (type == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) return false;
  const uint64_t main_heap = largest_device_local_heap(heaps);
  const uint32_t unified =
      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (const auto& t : types) {
    // Only in the main device-local heap: a 256 MiB BAR window beside it is
    // not unified memory either.
    if ((t.flags & unified) == unified && t.heap < heaps.size() && heaps[t.heap].size == main_heap) return true;
  }
  return false;
}

}  // namespace pebench
