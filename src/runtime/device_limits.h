// The plain facts of a device that kernels are planned from: its limits,
// subgroup properties and optional features, as numbers and flags with no
// Vulkan types, so code that only reads them (the variant contract, every
// suite) compiles without the Vulkan headers. query_physical_device
// (physical_device.h) fills them.
#pragma once

#include <cstdint>

namespace pebench {

// The storage texel buffer formats pebench binds (a kernel's texel build):
// vec4 texels of f32 or f16, or single f32s.
enum class TexelFormat { kRgba32f, kRgba16f, kR32f };
inline constexpr uint32_t texel_bytes(TexelFormat f) {
  return f == TexelFormat::kRgba32f ? 16 : f == TexelFormat::kRgba16f ? 8 : 4;
}
inline constexpr bool texel_is_vec4(TexelFormat f) { return f != TexelFormat::kR32f; }

struct DeviceFeatures {
  bool storage_buffer_16bit = false;   // VkPhysicalDevice16BitStorageFeatures::storageBuffer16BitAccess
  bool shader_float16 = false;         // VkPhysicalDeviceShaderFloat16Int8Features::shaderFloat16
  bool shader_int8 = false;            // ...::shaderInt8
  bool storage_buffer_8bit = false;    // VkPhysicalDevice8BitStorageFeatures::storageBuffer8BitAccess
  bool subgroup_size_control = false;  // VkPhysicalDeviceSubgroupSizeControlFeatures
  bool compute_full_subgroups = false;
  bool shader_int64 = false;
  bool shader_float64 = false;
  bool pipeline_executable_info = false;  // VK_KHR_pipeline_executable_properties: the compiler's statistics
  bool integer_dot_product = false;       // VK_KHR_shader_integer_dot_product (core 1.3)
  bool integer_dot_product_4x8_accelerated = false;  // integerDotProduct4x8BitPacked{Signed,Unsigned}Accelerated
  bool cooperative_matrix = false;        // VK_KHR_cooperative_matrix::cooperativeMatrix
  bool bfloat16 = false;                  // VK_KHR_shader_bfloat16::shaderBFloat16Type (headers permitting)
  // Storage texel buffers (VK_FORMAT_FEATURE_STORAGE_TEXEL_BUFFER_BIT of
  // R32G32B32A32_SFLOAT / R16G16B16A16_SFLOAT / R32_SFLOAT): format
  // properties, nothing to enable.
  bool storage_texel_rgba32f = false;
  bool storage_texel_rgba16f = false;
  bool storage_texel_r32f = false;

  bool storage_texel(TexelFormat f) const {
    return f == TexelFormat::kRgba32f   ? storage_texel_rgba32f
           : f == TexelFormat::kRgba16f ? storage_texel_rgba16f
                                        : storage_texel_r32f;
  }
};

struct DeviceLimits {
  uint32_t max_compute_shared_memory_size = 0;
  uint32_t max_compute_work_group_invocations = 0;
  uint32_t max_compute_work_group_size[3] = {0, 0, 0};
  uint32_t max_compute_work_group_count[3] = {0, 0, 0};
  uint32_t max_storage_buffer_range = 0;
  uint32_t max_push_constants_size = 0;
  uint64_t min_storage_buffer_offset_alignment = 0;
  uint32_t max_per_stage_descriptor_storage_buffers = 0;
  uint32_t max_bound_descriptor_sets = 0;
  uint32_t max_uniform_buffer_range = 0;
  uint32_t max_per_stage_resources = 0;
  uint32_t max_per_stage_descriptor_storage_images = 0;  // storage texel buffers count here
  uint32_t max_texel_buffer_elements = 0;
  uint64_t min_texel_buffer_offset_alignment = 0;
  uint64_t max_memory_allocation_size = 0;  // Vulkan 1.1 maintenance3
  float timestamp_period = 0;               // nanoseconds per tick, as reported
};

struct SubgroupInfo {
  uint32_t size = 0;               // default subgroup size
  uint32_t min_size = 0;           // with subgroup size control, else == size
  uint32_t max_size = 0;
  uint32_t supported_operations = 0;  // VkSubgroupFeatureFlags
  bool supported_in_compute = false;
};

// SubgroupInfo::supported_operations bit for subgroup shuffles
// (VK_SUBGROUP_FEATURE_SHUFFLE_BIT; physical_device.cc checks they agree).
inline constexpr uint32_t kSubgroupFeatureShuffle = 0x00000010;

}  // namespace pebench
