// DeviceProfile: the limits and features a GPU or phone class guarantees, in
// the Vulkan Profiles JSON format (what the Khronos Vulkan-Profiles
// repository publishes and vulkan.gpuinfo.org exports), so that `--emulate`
// can show the planner that device's limits while the real device runs and
// validates the kernels.
//
// Rules (interface.md, "--emulate"): the emulated device is never above the
// real one (each limit is the stricter of the two, each feature needs both);
// the subgroup size stays the device's own (it is how the hardware runs);
// limits a profile does not name stay the device's; a feature a profile does
// not list is taken as absent (a profile lists what it guarantees). A profile
// without a device type leaves the device's own. Every limit pebench applies
// is read as its Vulkan type (uint32_t or VkDeviceSize): a value that is not
// a whole number in that type's range, or a "max" limit of 0, is refused
// (UsageError naming the limit and the value), so that a profile can only
// tighten the device, never loosen it through a wrapped conversion.
#pragma once

#include <volk.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/physical_device.h"

namespace pebench {

struct DeviceProfile {
  std::string name;
  std::string source;  // "built-in" or the file it was read from
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
  bool typed = false;  // the profile names its deviceType; otherwise the device keeps its own
  std::map<std::string, std::vector<double>> limits;  // Vulkan limit name -> value(s) (arrays: 3)
  std::map<std::string, bool> features;               // Vulkan feature member name -> guaranteed
  std::optional<uint32_t> subgroup_operations;        // VkSubgroupFeatureFlags, when the profile names them
};

struct BuiltinProfile {
  const char* name;
  const char* summary;
};
// Every built-in profile, for `pebench devices --profiles`.
std::vector<BuiltinProfile> builtin_profiles();

// PROFILE as `--emulate` takes it: a built-in name or a Vulkan Profiles JSON
// file. Throws UsageError naming the value: unknown name, unreadable file,
// not JSON, no limits.
DeviceProfile load_profile(const std::string& name_or_path);

// Parses Vulkan Profiles JSON text (the union of all its capabilities).
// Throws UsageError naming `origin` when it is not JSON or holds no limits.
DeviceProfile parse_profile_json(const std::string& text, const std::string& origin);

// `real` as the profile shows it (rules above); info.profile names it.
PhysicalDeviceInfo apply_profile(const PhysicalDeviceInfo& real, const DeviceProfile& profile);

}  // namespace pebench
