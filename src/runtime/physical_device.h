// PhysicalDeviceInfo: everything pebench needs to know about a physical
// device, queried once: identity, driver, API version, subgroup properties,
// the limits and optional features kernels depend on, memory and the compute
// queue's timestamp support.
//
// Contract: query_physical_device() only chains the property/feature structs
// the device's API version or extensions support (a Vulkan 1.1 device is
// queried without 1.2/1.3 structs), so it is valid under the validation layer.
#pragma once

#include <volk.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "runtime/device_limits.h"
#include "runtime/status.h"

namespace pebench {

struct MemoryHeap {
  uint64_t size = 0;
  uint32_t flags = 0;  // VkMemoryHeapFlags
};
struct MemoryType {
  uint32_t heap = 0;
  uint32_t flags = 0;  // VkMemoryPropertyFlags
};

struct PhysicalDeviceInfo {
  uint32_t index = 0;
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  std::string name;
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  uint32_t api_version = 0;
  uint32_t driver_version_raw = 0;
  VkDriverId driver_id = static_cast<VkDriverId>(0);
  std::string driver_name;
  std::string driver_info;
  uint8_t device_uuid[VK_UUID_SIZE] = {};          // VkPhysicalDeviceIDProperties::deviceUUID
  uint8_t driver_uuid[VK_UUID_SIZE] = {};          // ...::driverUUID
  uint8_t pipeline_cache_uuid[VK_UUID_SIZE] = {};  // VkPhysicalDeviceProperties::pipelineCacheUUID
  std::string conformance_version;                 // "1.3.6.0"; empty: no VK_KHR_driver_properties
  std::vector<MemoryHeap> memory_heaps;
  std::vector<MemoryType> memory_types;
  SubgroupInfo subgroup;
  DeviceFeatures features;
  DeviceLimits limits;
  std::set<std::string> extensions;

  uint32_t compute_queue_family = UINT32_MAX;
  uint32_t timestamp_valid_bits = 0;  // of the compute queue family; 0 = no timestamps
  uint64_t device_local_heap_bytes = 0;  // the largest device-local heap
  bool has_unified_memory = false;       // a device-local, host-visible, coherent type
  std::string profile;                   // the --emulate profile this view follows; empty: the device itself

  bool has_extension(const char* name) const { return extensions.count(name) != 0; }
  bool timestamps_supported() const {
    return timestamp_valid_bits > 0 && limits.timestamp_period > 0;
  }
};

// The size of the largest device-local heap (0: none).
uint64_t largest_device_local_heap(const std::vector<MemoryHeap>& heaps);
// Whether device-local memory is host memory too (integrated GPUs, CPUs): a
// device-local, host-visible, coherent type in the largest device-local
// heap, on a device that is not a discrete GPU.
bool is_unified_memory(VkPhysicalDeviceType type, const std::vector<MemoryHeap>& heaps,
                       const std::vector<MemoryType>& types);

// Queries everything above. `index` is the device's position in the loader's list.
StatusOr<PhysicalDeviceInfo> query_physical_device(VkPhysicalDevice device, uint32_t index);

// The vendor behind a PCI or Khronos vendor id: "AMD", "NVIDIA", "Intel",
// "ARM", "Qualcomm", "Imagination", "Apple", "Broadcom", "Samsung", "Huawei",
// "Mesa software" (lavapipe/llvmpipe: Mesa's id 0x10005), ...; unknown ids:
// "unknown".
const char* vendor_name(uint32_t vendor_id);

// VkSubgroupFeatureFlags as names ("basic", "vote", "arithmetic", "ballot",
// "shuffle", "shuffle_relative", "clustered", "quad", ...).
std::vector<std::string> subgroup_operation_names(uint32_t flags);

// VkMemoryHeapFlags / VkMemoryPropertyFlags as names ("device_local",
// "multi_instance"; "device_local", "host_visible", "host_coherent",
// "host_cached", "lazily_allocated", "protected", ...).
std::vector<std::string> memory_heap_flag_names(uint32_t flags);
std::vector<std::string> memory_property_names(uint32_t flags);

// 16 bytes as the canonical 8-4-4-4-12 lowercase hex UUID.
std::string uuid_string(const uint8_t (&uuid)[VK_UUID_SIZE]);

// "discrete", "integrated", "virtual", "cpu" or "other".
const char* device_type_name(VkPhysicalDeviceType type);

// "1.3.230": the API version as major.minor.patch.
std::string api_version_string(uint32_t version);

// The driver version decoded the way its vendor encodes it: NVIDIA packs
// 10.8.8.6 bits, Intel's Windows driver 18.14 bits, everyone else uses
// VK_MAKE_API_VERSION.
std::string driver_version_string(uint32_t vendor_id, VkDriverId driver_id, uint32_t version);

// The compute queue family's timestamp counter: ticks of `valid_bits` bits,
// `period_ns` nanoseconds each. Differences are taken modulo 2^valid_bits, so
// one wrap-around between two timestamps is handled; the period is a double.
struct TimestampClock {
  uint32_t valid_bits = 64;
  double period_ns = 1.0;
  uint64_t mask() const { return valid_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << valid_bits) - 1; }
  double elapsed_ns(uint64_t begin, uint64_t end) const {
    return static_cast<double>((end - begin) & mask()) * period_ns;
  }
};

}  // namespace pebench
