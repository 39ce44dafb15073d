#include "cli/vulkan_session.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "harness/contract/errors.h"
#include "io/checked_number.h"
#include "io/input_file.h"

namespace pebench {
namespace {

// What is wrong with one entry of the driver variable: "" when it looks like
// a driver manifest whose library exists (the loader may still refuse it).
std::string manifest_problem(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return fmt::format("{}: {}", path, std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return "";  // a folder of manifests: the loader reads each
  std::string text;
  try {
    text = read_input_file(path, size_t{1} << 20, "Vulkan driver manifest");
  } catch (const InputFileError& e) {
    return e.what();
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return path + ": not JSON, so not a Vulkan driver manifest";
  }
  const auto icd = j.is_object() ? j.find("ICD") : j.end();
  if (!j.is_object() || icd == j.end() || !icd->is_object() || !icd->contains("library_path") ||
      !(*icd)["library_path"].is_string()) {
    return path + ": not a Vulkan driver manifest (no ICD.library_path)";
  }
  const std::string lib = (*icd)["library_path"].get<std::string>();
  // A bare name is found on the library path; a path is relative to the manifest.
  if (lib.find('/') == std::string::npos) return "";
  const std::filesystem::path full =
      std::filesystem::path(lib).is_absolute() ? std::filesystem::path(lib)
                                               : std::filesystem::path(path).parent_path() / lib;
  if (!std::filesystem::exists(full)) return fmt::format("{}: its library {} does not exist", path, full.string());
  return "";
}

// When no Vulkan driver could be used: bad input (exit 2) naming the
// variable and the file when the user chose the drivers, else a line saying
// what to install. `what` is the loader's answer.
[[noreturn]] void no_driver(const std::string& what) {
  for (const char* var : {"VK_DRIVER_FILES", "VK_ICD_FILENAMES", "VK_ADD_DRIVER_FILES"}) {
    const char* value = std::getenv(var);
    if (!value || !*value) continue;
    std::string problem;
    std::string list = value;
    for (size_t start = 0; start <= list.size() && problem.empty();) {
      const size_t end = std::min(list.find(':', start), list.size());
      const std::string entry = list.substr(start, end - start);
      if (!entry.empty()) problem = manifest_problem(entry);
      start = end + 1;
    }
    if (problem.empty()) problem = fmt::format("{}={} names no driver that loads", var, value);
    throw UsageError(fmt::format("no usable Vulkan driver ({}): {} {}; point {} at a driver manifest such as "
                                 "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json (lavapipe), or unset it",
                                 what, var, problem, var));
  }
  throw std::runtime_error(fmt::format(
      "no usable Vulkan driver ({}): install one (for the software device lavapipe, mesa-vulkan-drivers); "
      "VK_DRIVER_FILES selects drivers",
      what));
}

}  // namespace

VulkanSession open_vulkan(bool validation, const ValidationChecks& checks, bool print_warnings) {
  VulkanSession s;
  InstanceOptions options;
  options.validation = validation;
  options.checks = checks;
  options.print_warnings = print_warnings;
  auto instance = Instance::Create(options);
  if (!instance.ok()) {
    const VkResult r = instance.status().vk_result();
    // What the loader answers when no driver loads: a garbage manifest gives
    // VK_ERROR_OUT_OF_HOST_MEMORY, a missing one VK_ERROR_INCOMPATIBLE_DRIVER.
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_OUT_OF_HOST_MEMORY ||
        r == VK_ERROR_INITIALIZATION_FAILED) {
      if (instance.status().message().rfind("vkCreateInstance", 0) == 0) no_driver(instance.status().message());
    }
    throw std::runtime_error(instance.status().message());
  }
  s.instance = std::move(instance).value();
  auto handles = s.instance->physical_devices();
  if (!handles.ok()) no_driver(handles.status().message());
  if (handles.value().empty()) no_driver("no Vulkan device found");
  for (uint32_t i = 0; i < handles.value().size(); ++i) {
    auto info = query_physical_device(handles.value()[i], i);
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
