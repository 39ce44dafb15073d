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
//
// Which of the layer's checks run (ValidationChecks, `run --validate=LIST`)
// pebench configures itself at vkCreateInstance: VkValidationFeaturesEXT
// enables synchronization validation, GPU-assisted validation and best
// practices; the vendor best-practices checks (Arm, AMD, NVIDIA) and an
// unlimited count of repeated messages go through VK_EXT_layer_settings
// where the layer offers it, else (the layer before 1.3.268: Debian 12's
// 1.3.239) through the layer's own settings, the VK_LAYER_ENABLES and
// VK_LAYER_DUPLICATE_MESSAGE_LIMIT variables, which pebench sets in its own
// process (overriding the user's) before it creates the instance. The core
// checks are always on.
#pragma once

#include <volk.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/status.h"

namespace pebench {

// The validation layer's check groups (interface.md, `run --validate=LIST`).
struct ValidationChecks {
  bool core = false;            // the layer's default checks (always on with the layer)
  bool sync = false;            // synchronization validation
  bool gpu_av = false;          // GPU-assisted validation (instrumented shaders)
  bool best_practices = false;  // best practices, with the Arm, AMD and NVIDIA checks
  bool any() const { return core || sync || gpu_av || best_practices; }
  // "core,sync,gpu-av,best-practices" order; "" when none.
  std::string names() const;
  bool operator==(const ValidationChecks& o) const {
    return core == o.core && sync == o.sync && gpu_av == o.gpu_av && best_practices == o.best_practices;
  }
};
// A comma list of core, sync, gpu-av, best-practices, all; empty means core
// (plain --validate). Nothing for an unknown name (error: what was wrong).
std::optional<ValidationChecks> parse_validation_checks(const std::string& list, std::string* error = nullptr);

struct InstanceOptions {
  bool validation = false;          // Khronos validation layer (core checks) + debug messenger
  ValidationChecks checks;          // more checks; any() implies `validation`
  bool print_warnings = false;      // also print each warning id's first message (always counted)
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
  const ValidationChecks& validation_checks() const { return checks_; }
  // How the checks were configured: "VK_EXT_layer_settings" or
  // "VK_LAYER_ENABLES" (the layer's own settings); "" without the layer.
  const std::string& validation_config() const { return config_; }

  // Errors and warnings reported by the validation layer so far.
  uint64_t validation_error_count() const { return errors_.load(); }
  uint64_t validation_warning_count() const { return warnings_.load(); }
  // The first few error messages, for test failure messages.
  std::vector<std::string> validation_messages() const;
  // Every warning so far, counted by the layer's message id name
  // (pMessageIdName, else the number in hex).
  std::map<std::string, uint64_t> validation_warnings_by_id() const;

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
  ValidationChecks checks_;
  std::string config_;
  std::atomic<uint64_t> errors_{0};
  std::atomic<uint64_t> warnings_{0};
  mutable std::mutex mutex_;  // guards messages_ and warning_ids_
  std::vector<std::string> messages_;
  std::map<std::string, uint64_t> warning_ids_;
};

}  // namespace pebench
