// Instance: the volk-loaded VkInstance, optionally with the Khronos
// validation layer and a debug messenger that counts what it reports.
//
// Contract: Create() loads the Vulkan loader (volk), creates an instance of the
// highest API version the loader offers (at most 1.3), and, when
// `validation` is set, enables VK_LAYER_KHRONOS_validation plus
// VK_EXT_debug_utils; every validation error is printed to stderr and counted
// (validation_error_count()), so tests and `--validate` runs can fail on it.
// Only validation-type messages count: the loader's general-type errors
// (an ICD it cannot load) are printed, not counted.
// Asking for validation when the layer is not installed is an error, not a
// silent downgrade. The Instance must outlive every object created from it.
#pragma once

#include <volk.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "runtime/status.h"

namespace pebench {

struct InstanceOptions {
  bool validation = false;          // Khronos validation layer + debug messenger
  bool print_warnings = false;      // also print validation warnings (always counted)
  std::string application_name = "pebench";
};

class Instance {
 public:
  static StatusOr<std::unique_ptr<Instance>> Create(const InstanceOptions& options);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  uint32_t api_version() const { return api_version_; }
  bool validation_enabled() const { return messenger_ != VK_NULL_HANDLE; }

  // Errors and warnings reported by the validation layer so far.
  uint64_t validation_error_count() const { return errors_.load(); }
  uint64_t validation_warning_count() const { return warnings_.load(); }
  // The first few error messages, for test failure messages.
  std::vector<std::string> validation_messages() const;

  // Every physical device, in the loader's order (the index used everywhere).
  StatusOr<std::vector<VkPhysicalDevice>> physical_devices() const;

 private:
  Instance() = default;
  static VKAPI_ATTR VkBool32 VKAPI_CALL DebugCallback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                      VkDebugUtilsMessageTypeFlagsEXT types,
                                                      const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                      void* user);

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  uint32_t api_version_ = VK_API_VERSION_1_1;
  bool print_warnings_ = false;
  std::atomic<uint64_t> errors_{0};
  std::atomic<uint64_t> warnings_{0};
  std::vector<std::string> messages_;  // guarded by being written only from the callback thread
};

}  // namespace pebench
