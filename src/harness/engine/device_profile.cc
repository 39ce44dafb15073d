#include "harness/engine/device_profile.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "harness/contract/errors.h"
#include "io/input_file.h"

namespace pebench {
namespace {

// desktop-gpu: what current desktop GPUs of all three vendors offer, so a
// plan made for it runs on any of them. Shared memory is NVIDIA's 48 KiB
// (AMD offers 64 KiB), push constants 256 bytes (all three), 1024
// invocations per workgroup (all three); every feature pebench uses, and
// every subgroup operation.
constexpr const char* kDesktopGpu = R"({
  "capabilities": { "desktop": {
    "features": {
      "VkPhysicalDeviceFeatures": { "shaderInt64": true, "shaderFloat64": true },
      "VkPhysicalDevice16BitStorageFeatures": { "storageBuffer16BitAccess": true },
      "VkPhysicalDeviceShaderFloat16Int8Features": { "shaderFloat16": true, "shaderInt8": true },
      "VkPhysicalDevice8BitStorageFeatures": { "storageBuffer8BitAccess": true },
      "VkPhysicalDeviceSubgroupSizeControlFeatures": { "subgroupSizeControl": true, "computeFullSubgroups": true }
    },
    "properties": {
      "VkPhysicalDeviceProperties": {
        "deviceType": "VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU",
        "limits": {
          "maxComputeSharedMemorySize": 49152,
          "maxComputeWorkGroupInvocations": 1024,
          "maxComputeWorkGroupSize": [1024, 1024, 64],
          "maxComputeWorkGroupCount": [2147483647, 65535, 65535],
          "maxStorageBufferRange": 4294967295,
          "maxPushConstantsSize": 256,
          "maxPerStageDescriptorStorageBuffers": 1048576,
          "minStorageBufferOffsetAlignment": 64
        }
      },
      "VkPhysicalDeviceSubgroupProperties": {
        "supportedOperations": ["VK_SUBGROUP_FEATURE_BASIC_BIT", "VK_SUBGROUP_FEATURE_VOTE_BIT",
          "VK_SUBGROUP_FEATURE_ARITHMETIC_BIT", "VK_SUBGROUP_FEATURE_BALLOT_BIT", "VK_SUBGROUP_FEATURE_SHUFFLE_BIT",
          "VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT", "VK_SUBGROUP_FEATURE_CLUSTERED_BIT", "VK_SUBGROUP_FEATURE_QUAD_BIT"]
      }
    }
  } },
  "profiles": { "desktop-gpu": { "capabilities": ["desktop"] } }
})";

// android-baseline-2022: the Khronos profile VP_ANDROID_vulkan_profile_2022
// (formerly VP_ANDROID_baseline_2022, Vulkan-Profiles
// profiles/Android/VP_ANDROID_vulkan_profile_2022.json, which takes its
// limits from VP_ANDROID_vulkan_profile_2021): 128 invocations (128 x 128 x
// 64), 16 KiB shared memory, 128 MiB storage buffers, 128 bytes of push
// constants, 4 storage buffers per stage, 4 descriptor sets, 256-byte buffer
// offset alignment, 1 GiB allocations, basic subgroup operations only, and
// no 16-bit storage or float16 arithmetic required.
constexpr const char* kAndroidBaseline2022 = R"({
  "capabilities": { "baseline": {
    "features": { "VkPhysicalDeviceFeatures": { "shaderInt16": true } },
    "properties": {
      "VkPhysicalDeviceProperties": {
        "deviceType": "VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU",
        "limits": {
          "maxComputeSharedMemorySize": 16384,
          "maxComputeWorkGroupInvocations": 128,
          "maxComputeWorkGroupSize": [128, 128, 64],
          "maxComputeWorkGroupCount": [65535, 65535, 65535],
          "maxStorageBufferRange": 134217728,
          "maxPushConstantsSize": 128,
          "maxPerStageDescriptorStorageBuffers": 4,
          "maxBoundDescriptorSets": 4,
          "minStorageBufferOffsetAlignment": 256
        }
      },
      "VkPhysicalDeviceMaintenance3Properties": { "maxMemoryAllocationSize": 1073741824 },
      "VkPhysicalDeviceSubgroupProperties": { "supportedOperations": ["VK_SUBGROUP_FEATURE_BASIC_BIT"] }
    }
  } },
  "profiles": { "android-baseline-2022": { "capabilities": ["baseline"] } }
})";

// The vendor classes below extend android-baseline-2022 (every Android
// device must meet it, so a class profile is the union of the baseline and
// the class's own capability). A limit is named only where a driver's source
// or the vendor's documentation gives it; everything else stays at the
// baseline, so a plan made for a class runs on every device of that class.
// The subgroup size is not a profile limit: it stays the real device's.

// mali-valhall: Arm Mali-G57/G68/G77/G78/G710 (Valhall).
//  - maxComputeWorkGroupInvocations 512 (512 x 512 x 512): Arm's published
//    Valhall limit (Mali GPU best-practices guide; the vulkan.gpuinfo.org
//    records of Mali-G78 devices report the same); not re-checked here.
//  - maxComputeSharedMemorySize 32768: Mesa panvk (src/panfrost/vulkan,
//    "we cap it to 32K"), as Arm's driver reports on gpuinfo.
//  - maxPushConstantsSize 128: Mesa panvk MAX_PUSH_CONSTANTS_SIZE.
//  - 16-bit storage and float16/int8 arithmetic: Valhall has them (Arm's
//    driver exposes VK_KHR_16bit_storage and shaderFloat16).
constexpr const char* kMaliValhall = R"({
  "capabilities": { "mali_valhall": {
    "features": {
      "VkPhysicalDevice16BitStorageFeatures": { "storageBuffer16BitAccess": true },
      "VkPhysicalDeviceShaderFloat16Int8Features": { "shaderFloat16": true, "shaderInt8": true }
    },
    "properties": {
      "VkPhysicalDeviceProperties": {
        "deviceType": "VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU",
        "limits": {
          "maxComputeSharedMemorySize": 32768,
          "maxComputeWorkGroupInvocations": 512,
          "maxComputeWorkGroupSize": [512, 512, 512],
          "maxPushConstantsSize": 128
        }
      },
      "VkPhysicalDeviceSubgroupProperties": {
        "supportedOperations": ["VK_SUBGROUP_FEATURE_BASIC_BIT", "VK_SUBGROUP_FEATURE_VOTE_BIT",
          "VK_SUBGROUP_FEATURE_ARITHMETIC_BIT", "VK_SUBGROUP_FEATURE_BALLOT_BIT",
          "VK_SUBGROUP_FEATURE_SHUFFLE_BIT", "VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT",
          "VK_SUBGROUP_FEATURE_QUAD_BIT"]
      }
    }
  } },
  "profiles": { "mali-valhall": { "capabilities": ["mali_valhall"] } }
})";

// adreno-6xx-7xx: Qualcomm Adreno 6xx/7xx (Snapdragon 845 onwards).
//  - maxComputeWorkGroupInvocations 1024 (1024 x 1024 x 64), shared memory
//    32768: Qualcomm's driver on vulkan.gpuinfo.org (Adreno 630-740 records;
//    Mesa Turnip derives 32 KiB from freedreno_devices.py cs_shared_mem_size
//    and its maxComputeWorkGroupSize is 1024 in x, y and z); not re-checked here.
//  - maxPushConstantsSize 128: Mesa Turnip MAX_PUSH_CONSTANTS_SIZE
//    (src/freedreno/vulkan/tu_common.h).
//  - 16-bit storage and float16 arithmetic: Adreno 6xx/7xx have them.
//  Subgroups are 64 or 128 wide (Turnip: threadsize_base 64, double threadsize).
constexpr const char* kAdreno = R"({
  "capabilities": { "adreno_6xx_7xx": {
    "features": {
      "VkPhysicalDevice16BitStorageFeatures": { "storageBuffer16BitAccess": true },
      "VkPhysicalDeviceShaderFloat16Int8Features": { "shaderFloat16": true },
      "VkPhysicalDeviceSubgroupSizeControlFeatures": { "subgroupSizeControl": true, "computeFullSubgroups": true }
    },
    "properties": {
      "VkPhysicalDeviceProperties": {
        "deviceType": "VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU",
        "limits": {
          "maxComputeSharedMemorySize": 32768,
          "maxComputeWorkGroupInvocations": 1024,
          "maxComputeWorkGroupSize": [1024, 1024, 64],
          "maxPushConstantsSize": 128
        }
      },
      "VkPhysicalDeviceSubgroupProperties": {
        "supportedOperations": ["VK_SUBGROUP_FEATURE_BASIC_BIT", "VK_SUBGROUP_FEATURE_VOTE_BIT",
          "VK_SUBGROUP_FEATURE_ARITHMETIC_BIT", "VK_SUBGROUP_FEATURE_BALLOT_BIT",
          "VK_SUBGROUP_FEATURE_SHUFFLE_BIT", "VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT",
          "VK_SUBGROUP_FEATURE_CLUSTERED_BIT", "VK_SUBGROUP_FEATURE_QUAD_BIT"]
      }
    }
  } },
  "profiles": { "adreno-6xx-7xx": { "capabilities": ["adreno_6xx_7xx"] } }
})";

// powervr-rogue: Imagination PowerVR Rogue/B-series (AXE, BXE, BXM, BXS),
// every number from Mesa's PowerVR driver (src/imagination/vulkan/
// pvr_physical_device.c, pvr_physical_device_get_properties, Mesa commit
// 10ba7675c8b9): 128 invocations (128 x 128 x 64), 16 KiB shared memory,
// 128 MiB storage buffers, 128 bytes of push constants, 4 storage buffers
// per stage, 4 descriptor sets, basic subgroup operations only (subgroup
// size 1), and no 16-bit storage, float16 or int8 (its feature table says
// false). That is the Android baseline exactly, which is the point: the
// baseline is what such a GPU offers.
constexpr const char* kPowerVr = R"({
  "capabilities": { "powervr_rogue": {
    "properties": {
      "VkPhysicalDeviceProperties": {
        "deviceType": "VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU",
        "limits": {
          "maxComputeSharedMemorySize": 16384,
          "maxComputeWorkGroupInvocations": 128,
          "maxComputeWorkGroupSize": [128, 128, 64],
          "maxStorageBufferRange": 134217728,
          "maxPushConstantsSize": 128,
          "maxPerStageDescriptorStorageBuffers": 4,
          "maxBoundDescriptorSets": 4
        }
      },
      "VkPhysicalDeviceSubgroupProperties": { "supportedOperations": ["VK_SUBGROUP_FEATURE_BASIC_BIT"] }
    }
  } },
  "profiles": { "powervr-rogue": { "capabilities": ["powervr_rogue"] } }
})";

struct BuiltinText {
  BuiltinProfile info;
  const char* json;
  const char* extends = nullptr;  // a profile whose capabilities this one adds to
};
const std::vector<BuiltinText>& builtins() {
  static const std::vector<BuiltinText> all = {
      {{"desktop-gpu", "a current desktop GPU (NVIDIA, AMD, Intel): 48 KiB shared memory, 1024 invocations, discrete"},
       kDesktopGpu},
      {{"android-baseline-2022",
        "Khronos VP_ANDROID_vulkan_profile_2022: 16 KiB shared memory, 128 invocations, 4 storage buffers, "
        "128-byte push constants, no 16-bit storage"},
       kAndroidBaseline2022},
      {{"mali-valhall",
        "Arm Mali Valhall (G57-G710) on Android: 32 KiB shared memory, 512 invocations, 16-bit storage; "
        "the baseline's 4 storage buffers and 128-byte push constants"},
       kMaliValhall, kAndroidBaseline2022},
      {{"adreno-6xx-7xx",
        "Qualcomm Adreno 6xx/7xx on Android: 32 KiB shared memory, 1024 invocations, 16-bit storage; "
        "the baseline's 4 storage buffers and 128-byte push constants"},
       kAdreno, kAndroidBaseline2022},
      {{"powervr-rogue",
        "Imagination PowerVR Rogue/B-series (Mesa's driver): 16 KiB shared memory, 128 invocations, "
        "4 storage buffers, no 16-bit storage"},
       kPowerVr, kAndroidBaseline2022},
  };
  return all;
}

uint32_t subgroup_flag(const std::string& name) {
  static const std::map<std::string, uint32_t> flags = {
      {"VK_SUBGROUP_FEATURE_BASIC_BIT", VK_SUBGROUP_FEATURE_BASIC_BIT},
      {"VK_SUBGROUP_FEATURE_VOTE_BIT", VK_SUBGROUP_FEATURE_VOTE_BIT},
      {"VK_SUBGROUP_FEATURE_ARITHMETIC_BIT", VK_SUBGROUP_FEATURE_ARITHMETIC_BIT},
      {"VK_SUBGROUP_FEATURE_BALLOT_BIT", VK_SUBGROUP_FEATURE_BALLOT_BIT},
      {"VK_SUBGROUP_FEATURE_SHUFFLE_BIT", VK_SUBGROUP_FEATURE_SHUFFLE_BIT},
      {"VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT", VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT},
      {"VK_SUBGROUP_FEATURE_CLUSTERED_BIT", VK_SUBGROUP_FEATURE_CLUSTERED_BIT},
      {"VK_SUBGROUP_FEATURE_QUAD_BIT", VK_SUBGROUP_FEATURE_QUAD_BIT},
  };
  auto it = flags.find(name);
  return it == flags.end() ? 0 : it->second;
}

VkPhysicalDeviceType device_type_from(const std::string& s) {
  if (s == "VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU") return VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
  if (s == "VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU") return VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU;
  if (s == "VK_PHYSICAL_DEVICE_TYPE_CPU") return VK_PHYSICAL_DEVICE_TYPE_CPU;
  return VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
}

// Limits whose smaller value is the stricter one are "max..." limits; the
// "min..." ones (alignments) are stricter when larger.
bool larger_is_stricter(const std::string& limit) { return limit.rfind("min", 0) == 0; }

// The limits apply_profile applies, with the largest value of their Vulkan
// type: VkDeviceSize (uint64_t) or uint32_t.
double applied_limit_max(const std::string& name) {
  static const std::map<std::string, double> kMax = {
      {"maxComputeSharedMemorySize", 4294967295.0},  {"maxComputeWorkGroupInvocations", 4294967295.0},
      {"maxComputeWorkGroupSize", 4294967295.0},     {"maxComputeWorkGroupCount", 4294967295.0},
      {"maxStorageBufferRange", 4294967295.0},       {"maxPushConstantsSize", 4294967295.0},
      {"maxPerStageDescriptorStorageBuffers", 4294967295.0}, {"maxBoundDescriptorSets", 4294967295.0},
      {"maxUniformBufferRange", 4294967295.0},       {"maxPerStageResources", 4294967295.0},
      {"maxPerStageDescriptorStorageImages", 4294967295.0}, {"maxTexelBufferElements", 4294967295.0},
      {"minTexelBufferOffsetAlignment", 18446744073709549568.0},  // the largest double below 2^64
      {"minStorageBufferOffsetAlignment", 18446744073709549568.0},
      {"maxMemoryAllocationSize", 18446744073709549568.0}};
  auto it = kMax.find(name);
  return it == kMax.end() ? 0 : it->second;
}

// A limit pebench applies must be a whole number its Vulkan type holds (a
// "max" limit at least 1): anything else would be cast out of range and
// could loosen the device.
void check_applied_limit(const std::string& origin, const std::string& name, const nlohmann::json& v) {
  const double hi = applied_limit_max(name);
  if (hi == 0) return;  // a limit pebench does not apply: kept as given
  auto bad = [&](const std::string& why) {
    return UsageError(fmt::format("profile '{}': limit {} = {}: {}", origin, name, v.dump(), why));
  };
  const bool device_size = hi > 4294967295.0;
  const uint64_t lo = larger_is_stricter(name) ? 0 : 1;
  const uint64_t top = device_size ? UINT64_MAX : UINT32_MAX;
  for (const nlohmann::json& e : v.is_array() ? v : nlohmann::json::array({v})) {
    if (!e.is_number()) throw bad("not a number");
    bool ok = false;
    if (e.is_number_unsigned()) {
      ok = e.get<uint64_t>() >= lo && e.get<uint64_t>() <= top;
    } else if (e.is_number_integer()) {
      ok = e.get<int64_t>() >= static_cast<int64_t>(lo) && (device_size || e.get<int64_t>() <= int64_t(top));
    } else {
      const double x = e.get<double>();
      ok = x >= static_cast<double>(lo) && x <= hi && x == std::floor(x);
    }
    if (!ok) throw bad(fmt::format("not a whole number from {} to {} ({})", lo, top, device_size ? "VkDeviceSize" : "uint32_t"));
  }
}

// Capabilities combine as a union: the larger guarantee of each limit.
void merge_limit(DeviceProfile& p, const std::string& name, const nlohmann::json& v) {
  check_applied_limit(p.source, name, v);
  std::vector<double> values;
  if (v.is_number()) values.push_back(v.get<double>());
  if (v.is_array()) {
    for (const auto& e : v) {
      if (e.is_number()) values.push_back(e.get<double>());
    }
  }
  if (values.empty()) return;
  auto [it, inserted] = p.limits.emplace(name, values);
  if (inserted || it->second.size() != values.size()) return;
  for (size_t i = 0; i < values.size(); ++i) {
    it->second[i] = larger_is_stricter(name) ? std::min(it->second[i], values[i]) : std::max(it->second[i], values[i]);
  }
}

void merge_subgroup_ops(DeviceProfile& p, const nlohmann::json& ops) {
  if (!ops.is_array()) return;
  uint32_t flags = 0;
  for (const auto& o : ops) {
    if (o.is_string()) flags |= subgroup_flag(o.get<std::string>());
  }
  p.subgroup_operations = p.subgroup_operations.value_or(0) | flags;
}

void merge_properties(DeviceProfile& p, const nlohmann::json& props, bool& typed) {
  if (!props.is_object()) return;
  if (auto base = props.find("VkPhysicalDeviceProperties"); base != props.end() && base->is_object()) {
    if (auto t = base->find("deviceType"); t != base->end() && t->is_string() && !typed) {
      p.type = device_type_from(t->get<std::string>());
      p.typed = typed = true;
    }
    if (auto limits = base->find("limits"); limits != base->end() && limits->is_object()) {
      for (const auto& [k, v] : limits->items()) merge_limit(p, k, v);
    }
  }
  for (const char* s : {"VkPhysicalDeviceMaintenance3Properties", "VkPhysicalDeviceVulkan11Properties"}) {
    if (auto m = props.find(s); m != props.end() && m->is_object() && m->contains("maxMemoryAllocationSize")) {
      merge_limit(p, "maxMemoryAllocationSize", (*m)["maxMemoryAllocationSize"]);
    }
  }
  if (auto sg = props.find("VkPhysicalDeviceSubgroupProperties"); sg != props.end() && sg->is_object()) {
    if (sg->contains("supportedOperations")) merge_subgroup_ops(p, (*sg)["supportedOperations"]);
  }
  if (auto v11 = props.find("VkPhysicalDeviceVulkan11Properties"); v11 != props.end() && v11->is_object()) {
    if (v11->contains("subgroupSupportedOperations")) merge_subgroup_ops(p, (*v11)["subgroupSupportedOperations"]);
  }
}

// Feature structs are flattened by member name: the same member appears in
// an extension's struct and in VkPhysicalDeviceVulkan1xFeatures.
void merge_features(DeviceProfile& p, const nlohmann::json& feats) {
  if (!feats.is_object()) return;
  for (const auto& [s, members] : feats.items()) {
    if (!members.is_object()) continue;
    for (const auto& [m, v] : members.items()) {
      if (v.is_boolean()) p.features[m] = p.features[m] || v.get<bool>();
    }
  }
}

// A profile from vulkan.gpuinfo.org is tens of KiB; the cap keeps a wrong
// path (/dev/zero, a huge file) from filling memory.
constexpr size_t kMaxProfileBytes = size_t(16) << 20;

// The profile file's text, or "" when no such file exists (then the name
// was meant as a built-in profile's).
std::string read_file(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return {};
  try {
    return read_input_file(path, kMaxProfileBytes, "device profile");
  } catch (const InputFileError& e) {
    throw UsageError(fmt::format("--emulate {}", e.what()));
  }
}

}  // namespace

std::vector<BuiltinProfile> builtin_profiles() {
  std::vector<BuiltinProfile> out;
  for (const auto& b : builtins()) out.push_back(b.info);
  return out;
}

DeviceProfile parse_profile_json(const std::string& text, const std::string& origin) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw UsageError(fmt::format("profile '{}': not JSON", origin));
  DeviceProfile p;
  p.source = origin;
  p.name = origin;
  if (auto profiles = j.find("profiles"); j.is_object() && profiles != j.end() && profiles->is_object() &&
                                          !profiles->empty()) {
    p.name = profiles->begin().key();
  }
  bool typed = false;
  if (auto caps = j.find("capabilities"); j.is_object() && caps != j.end() && caps->is_object()) {
    for (const auto& [name, cap] : caps->items()) {
      if (!cap.is_object()) continue;
      if (cap.contains("properties")) merge_properties(p, cap["properties"], typed);
      if (cap.contains("features")) merge_features(p, cap["features"]);
    }
  }
  if (p.limits.empty()) {
    throw UsageError(fmt::format(
        "profile '{}': holds no limits (expected capabilities.<name>.properties.VkPhysicalDeviceProperties.limits)",
        origin));
  }
  return p;
}

DeviceProfile load_profile(const std::string& name_or_path) {
  for (const auto& b : builtins()) {
    if (name_or_path == b.info.name) {
      std::string text = b.json;
      if (b.extends) {
        // The union of both profiles' capabilities (the Vulkan Profiles rule).
        nlohmann::json j = nlohmann::json::parse(b.json);
        const nlohmann::json base = nlohmann::json::parse(b.extends);
        for (const auto& [k, v] : base.at("capabilities").items()) j["capabilities"][k] = v;
        text = j.dump();
      }
      DeviceProfile p = parse_profile_json(text, b.info.name);
      p.source = "built-in";
      return p;
    }
  }
  const std::string text = read_file(name_or_path);
  if (text.empty()) {
    std::string names;
    for (const auto& b : builtins()) names += (names.empty() ? "" : ", ") + std::string(b.info.name);
    throw UsageError(fmt::format("--emulate '{}': no such built-in profile ({}) and no such (non-empty) file",
                                 name_or_path, names));
  }
  return parse_profile_json(text, name_or_path);
}

namespace {

// The stricter of the device's value and the profile's, where it names one.
template <typename T>
void limit(T& field, const DeviceProfile& p, const std::string& name, size_t i = 0) {
  auto it = p.limits.find(name);
  if (it == p.limits.end() || it->second.size() <= i || !(it->second[i] >= 0)) return;
  // In range (check_applied_limit); clamped again so no cast can wrap.
  const double v = std::min(it->second[i], static_cast<double>(std::numeric_limits<T>::max()));
  const double now = static_cast<double>(field);
  const double tighter = larger_is_stricter(name) ? std::max(now, v) : std::min(now, v);
  field = tighter >= static_cast<double>(std::numeric_limits<T>::max()) ? std::numeric_limits<T>::max()
                                                                       : static_cast<T>(tighter);
}

void feature(bool& field, const DeviceProfile& p, const std::string& name) {
  auto it = p.features.find(name);
  field = field && it != p.features.end() && it->second;
}

}  // namespace

PhysicalDeviceInfo apply_profile(const PhysicalDeviceInfo& real, const DeviceProfile& p) {
  PhysicalDeviceInfo e = real;
  e.profile = p.name;
  if (p.typed) e.type = p.type;
  DeviceLimits& l = e.limits;
  limit(l.max_compute_shared_memory_size, p, "maxComputeSharedMemorySize");
  limit(l.max_compute_work_group_invocations, p, "maxComputeWorkGroupInvocations");
  for (size_t i = 0; i < 3; ++i) {
    limit(l.max_compute_work_group_size[i], p, "maxComputeWorkGroupSize", i);
    limit(l.max_compute_work_group_count[i], p, "maxComputeWorkGroupCount", i);
  }
  limit(l.max_storage_buffer_range, p, "maxStorageBufferRange");
  limit(l.max_push_constants_size, p, "maxPushConstantsSize");
  limit(l.max_per_stage_descriptor_storage_buffers, p, "maxPerStageDescriptorStorageBuffers");
  limit(l.max_bound_descriptor_sets, p, "maxBoundDescriptorSets");
  limit(l.max_uniform_buffer_range, p, "maxUniformBufferRange");
  limit(l.max_per_stage_resources, p, "maxPerStageResources");
  limit(l.max_per_stage_descriptor_storage_images, p, "maxPerStageDescriptorStorageImages");
  limit(l.max_texel_buffer_elements, p, "maxTexelBufferElements");
  limit(l.min_texel_buffer_offset_alignment, p, "minTexelBufferOffsetAlignment");
  limit(l.min_storage_buffer_offset_alignment, p, "minStorageBufferOffsetAlignment");
  if (l.max_memory_allocation_size) limit(l.max_memory_allocation_size, p, "maxMemoryAllocationSize");

  DeviceFeatures& f = e.features;
  feature(f.storage_buffer_16bit, p, "storageBuffer16BitAccess");
  feature(f.shader_float16, p, "shaderFloat16");
  feature(f.shader_int8, p, "shaderInt8");
  feature(f.storage_buffer_8bit, p, "storageBuffer8BitAccess");
  feature(f.subgroup_size_control, p, "subgroupSizeControl");
  feature(f.compute_full_subgroups, p, "computeFullSubgroups");
  feature(f.shader_int64, p, "shaderInt64");
  feature(f.shader_float64, p, "shaderFloat64");
  feature(f.integer_dot_product, p, "shaderIntegerDotProduct");
  f.integer_dot_product_4x8_accelerated = f.integer_dot_product_4x8_accelerated && f.integer_dot_product;
  feature(f.cooperative_matrix, p, "cooperativeMatrix");
  feature(f.bfloat16, p, "shaderBFloat16Type");
  if (!f.subgroup_size_control) e.subgroup.min_size = e.subgroup.max_size = e.subgroup.size;
  if (p.subgroup_operations) e.subgroup.supported_operations &= *p.subgroup_operations;
  return e;
}

}  // namespace pebench
