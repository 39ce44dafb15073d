#include "cli/vulkan_session.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "harness/contract/errors.h"
#include "io/checked_number.h"

namespace pebench {

VulkanSession open_vulkan(bool validation, const ValidationChecks& checks, bool print_warnings) {
  VulkanSession s;
  InstanceOptions options;
  options.validation = validation;
  options.checks = checks;
  options.print_warnings = print_warnings;
  auto instance = Instance::Create(options);
  if (!instance.ok()) throw std::runtime_error(instance.status().message());
  s.instance = std::move(instance).value();
  auto handles = s.instance->physical_devices().value();
  if (handles.empty()) {
    throw std::runtime_error(
        "no Vulkan device found (for the software device lavapipe, install mesa-vulkan-drivers; "
        "VK_DRIVER_FILES selects drivers)");
  }
  for (uint32_t i = 0; i < handles.size(); ++i) {
    auto info = query_physical_device(handles[i], i);
    if (!info.ok()) throw std::runtime_error(info.status().message());
    s.devices.push_back(std::move(info).value());
  }
  return s;
}

std::vector<uint32_t> select_devices(const std::vector<PhysicalDeviceInfo>& devices, const std::string& spec) {
  std::vector<uint32_t> out;
  if (spec.empty()) {
    for (const auto& d : devices) {
      if (d.type == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) return {d.index};
    }
    return {devices.front().index};
  }
  if (spec == "all") {
    for (const auto& d : devices) out.push_back(d.index);
    return out;
  }
  if (std::all_of(spec.begin(), spec.end(), [](unsigned char c) { return std::isdigit(c); })) {
    const auto idx = parse_whole_u64(spec, 0, UINT32_MAX);
    if (!idx || *idx >= devices.size()) {
      throw UsageError(fmt::format("no device with index {} (there are {}; see `pebench devices`)", spec,
                                   devices.size()));
    }
    return {static_cast<uint32_t>(*idx)};
  }
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  };
  for (const auto& d : devices) {
    if (lower(d.name).find(lower(spec)) != std::string::npos) out.push_back(d.index);
  }
  if (out.empty()) throw UsageError(fmt::format("no device matches '{}' (see `pebench devices`)", spec));
  return out;
}

}  // namespace pebench
