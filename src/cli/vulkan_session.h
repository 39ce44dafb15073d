// Opening Vulkan for a command: the instance, every physical device's info,
// and `--device` selection.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/instance.h"
#include "runtime/physical_device.h"

namespace pebench {

struct VulkanSession {
  std::unique_ptr<Instance> instance;
  std::vector<PhysicalDeviceInfo> devices;  // in the loader's order: index == position
};

// Throws std::runtime_error with a message saying what to install.
// `checks`: the validation layer's checks beyond the core ones (--validate=LIST).
VulkanSession open_vulkan(bool validation, const ValidationChecks& checks = {}, bool print_warnings = false);

// `spec`: "all", an index, or a case-insensitive name substring; empty: the
// first discrete GPU, else the first device. Throws UsageError naming `spec`
// when nothing matches.
std::vector<uint32_t> select_devices(const std::vector<PhysicalDeviceInfo>& devices, const std::string& spec);

}  // namespace pebench
