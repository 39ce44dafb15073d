#include "runtime/instance.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

// VK_EXT_layer_settings (Vulkan headers 1.3.268 and later); Debian 12's
// 1.3.239 headers lack it, and so does its layer, so it is declared here.
#ifndef VK_EXT_layer_settings
#define VK_EXT_LAYER_SETTINGS_EXTENSION_NAME "VK_EXT_layer_settings"
namespace {
constexpr VkStructureType VK_STRUCTURE_TYPE_LAYER_SETTINGS_CREATE_INFO_EXT = static_cast<VkStructureType>(1000496000);
enum VkLayerSettingTypeEXT { VK_LAYER_SETTING_TYPE_BOOL32_EXT = 0, VK_LAYER_SETTING_TYPE_STRING_EXT = 7 };
struct VkLayerSettingEXT {
  const char* pLayerName;
  const char* pSettingName;
  VkLayerSettingTypeEXT type;
  uint32_t valueCount;
  const void* pValues;
};
struct VkLayerSettingsCreateInfoEXT {
  VkStructureType sType;
  const void* pNext;
  uint32_t settingCount;
  const VkLayerSettingEXT* pSettings;
};
}  // namespace
#endif

namespace pebench {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";
constexpr size_t kKeptMessages = 8;

// The layer's own instance extensions (VK_EXT_layer_settings, from 1.3.268).
bool layer_has_extension(const char* layer, const char* name) {
  uint32_t count = 0;
  vkEnumerateInstanceExtensionProperties(layer, &count, nullptr);
  std::vector<VkExtensionProperties> exts(count);
  vkEnumerateInstanceExtensionProperties(layer, &count, exts.data());
  for (const auto& e : exts) {
    if (std::strcmp(e.extensionName, name) == 0) return true;
  }
  return false;
}

bool has_layer(const char* name) {
  uint32_t count = 0;
  vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  vkEnumerateInstanceLayerProperties(&count, layers.data());
  for (const auto& l : layers) {
    if (std::strcmp(l.layerName, name) == 0) return true;
  }
  return false;
}

std::vector<VkExtensionProperties> instance_extensions() {
  uint32_t count = 0;
  vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> exts(count);
  vkEnumerateInstanceExtensionProperties(nullptr, &count, exts.data());
  return exts;
}

bool has_extension(const std::vector<VkExtensionProperties>& exts, const char* name) {
  for (const auto& e : exts) {
    if (std::strcmp(e.extensionName, name) == 0) return true;
  }
  return false;
}

}  // namespace

StatusOr<std::unique_ptr<Instance>> Instance::Create(const InstanceOptions& options) {
  if (volkInitialize() != VK_SUCCESS) {
    return Status::error("volkInitialize: no Vulkan loader (libvulkan.so.1) found; install libvulkan1",
                         VK_ERROR_INITIALIZATION_FAILED);
  }
  std::unique_ptr<Instance> self(new Instance());
  self->print_warnings_ = options.print_warnings;
  ValidationChecks checks = options.checks;
  const bool validation = options.validation || checks.any();
  checks.core = validation;  // the core checks are always on with the layer

  uint32_t loader_version = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion) vkEnumerateInstanceVersion(&loader_version);
  if (loader_version < VK_API_VERSION_1_1) {
    return Status::error("the Vulkan loader supports only Vulkan 1.0; pebench needs 1.1",
                         VK_ERROR_INCOMPATIBLE_DRIVER);
  }
  self->api_version_ = loader_version < VK_API_VERSION_1_3 ? loader_version : VK_API_VERSION_1_3;

  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  const auto available = instance_extensions();
  if (validation) {
    if (!has_layer(kValidationLayer)) {
      return Status::error(
          "validation requested but VK_LAYER_KHRONOS_validation is not installed "
          "(Debian: vulkan-validationlayers)",
          VK_ERROR_LAYER_NOT_PRESENT);
    }
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
  }
  // Lets the loader report portability drivers (MoltenVK) too.
  VkInstanceCreateFlags flags = 0;
  if (has_extension(available, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = options.application_name.c_str();
  app.pEngineName = "pebench";
  app.apiVersion = self->api_version_;

  VkDebugUtilsMessengerCreateInfoEXT messenger_info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger_info.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger_info.pfnUserCallback = &Instance::DebugCallback;
  messenger_info.pUserData = self.get();

  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.flags = flags;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  // Chained so that instance creation and destruction are validated too.
  if (validation) info.pNext = &messenger_info;

  // The checks asked for, and no limit on repeated messages (each case
  // counts its own): VkValidationFeaturesEXT, plus the vendor checks and the
  // message limit as layer settings or, on an older layer, its variables.
  std::vector<VkValidationFeatureEnableEXT> enables;
  if (checks.sync) enables.push_back(VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT);
  if (checks.gpu_av) enables.push_back(VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT);
  if (checks.best_practices) enables.push_back(VK_VALIDATION_FEATURE_ENABLE_BEST_PRACTICES_EXT);
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = static_cast<uint32_t>(enables.size());
  features.pEnabledValidationFeatures = enables.data();
  const VkBool32 on = VK_TRUE, off = VK_FALSE;
  const VkBool32 vendor = checks.best_practices ? VK_TRUE : VK_FALSE;
  const std::vector<VkLayerSettingEXT> settings = {
      {kValidationLayer, "validate_best_practices_arm", VK_LAYER_SETTING_TYPE_BOOL32_EXT, 1, &vendor},
      {kValidationLayer, "validate_best_practices_amd", VK_LAYER_SETTING_TYPE_BOOL32_EXT, 1, &vendor},
      {kValidationLayer, "validate_best_practices_nvidia", VK_LAYER_SETTING_TYPE_BOOL32_EXT, 1, &vendor},
      {kValidationLayer, "validate_core", VK_LAYER_SETTING_TYPE_BOOL32_EXT, 1, &on},
      {kValidationLayer, "enable_message_limit", VK_LAYER_SETTING_TYPE_BOOL32_EXT, 1, &off},
  };
  VkLayerSettingsCreateInfoEXT layer_settings{VK_STRUCTURE_TYPE_LAYER_SETTINGS_CREATE_INFO_EXT};
  layer_settings.settingCount = static_cast<uint32_t>(settings.size());
  layer_settings.pSettings = settings.data();
  if (validation) {
    messenger_info.pNext = &features;
    if (layer_has_extension(kValidationLayer, VK_EXT_LAYER_SETTINGS_EXTENSION_NAME)) {
      extensions.push_back(VK_EXT_LAYER_SETTINGS_EXTENSION_NAME);
      features.pNext = &layer_settings;
      self->config_ = VK_EXT_LAYER_SETTINGS_EXTENSION_NAME;
    } else {
      // The 1.3.239 layer reads these at each vkCreateInstance (':' separates
      // entries); a duplicate limit of 0 keeps its default, no limit.
      setenv("VK_LAYER_ENABLES",
             checks.best_practices ? "VALIDATION_CHECK_ENABLE_VENDOR_SPECIFIC_ARM:"
                                     "VALIDATION_CHECK_ENABLE_VENDOR_SPECIFIC_AMD:"
                                     "VALIDATION_CHECK_ENABLE_VENDOR_SPECIFIC_NVIDIA"
                                   : "",
             1);
      setenv("VK_LAYER_DISABLES", "", 1);
      setenv("VK_LAYER_DUPLICATE_MESSAGE_LIMIT", "0", 1);
      self->config_ = "VK_LAYER_ENABLES";
    }
    self->checks_ = checks;
  }
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();

  PB_VK_RETURN_IF_ERROR(vkCreateInstance(&info, nullptr, &self->instance_));
  // Device functions too, through the loader's trampolines: they dispatch to the right
  // driver for every device, so several devices (`--device all`) can coexist.
  volkLoadInstance(self->instance_);

  if (validation) {
    messenger_info.pNext = nullptr;
    PB_VK_RETURN_IF_ERROR(vkCreateDebugUtilsMessengerEXT(self->instance_, &messenger_info, nullptr,
                                                         &self->messenger_));
  }
  return self;
}

Instance::~Instance() {
  if (messenger_ != VK_NULL_HANDLE) vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
  if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
}

std::vector<std::string> Instance::validation_messages() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return messages_;
}

std::map<std::string, uint64_t> Instance::validation_warnings_by_id() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return warning_ids_;
}

std::string ValidationChecks::names() const {
  std::string out;
  auto add = [&](bool on, const char* name) {
    if (on) out += (out.empty() ? "" : ",") + std::string(name);
  };
  add(core, "core");
  add(sync, "sync");
  add(gpu_av, "gpu-av");
  add(best_practices, "best-practices");
  return out;
}

std::optional<ValidationChecks> parse_validation_checks(const std::string& list, std::string* error) {
  ValidationChecks c;
  c.core = true;
  std::stringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) {
    if (name == "core") {
    } else if (name == "sync") {
      c.sync = true;
    } else if (name == "gpu-av") {
      c.gpu_av = true;
    } else if (name == "best-practices") {
      c.best_practices = true;
    } else if (name == "all") {
      c.sync = c.gpu_av = c.best_practices = true;
    } else {
      if (error) *error = "unknown check '" + name + "' (core, sync, gpu-av, best-practices, all)";
      return std::nullopt;
    }
  }
  if (!list.empty() && list.back() == ',') {
    if (error) *error = "an empty name in '" + list + "'";
    return std::nullopt;
  }
  return c;
}

StatusOr<std::vector<VkPhysicalDevice>> Instance::physical_devices() const {
  uint32_t count = 0;
  PB_VK_RETURN_IF_ERROR(vkEnumeratePhysicalDevices(instance_, &count, nullptr));
  std::vector<VkPhysicalDevice> devices(count);
  if (count > 0) PB_VK_RETURN_IF_ERROR(vkEnumeratePhysicalDevices(instance_, &count, devices.data()));
  devices.resize(count);
  return devices;
}

VKAPI_ATTR VkBool32 VKAPI_CALL Instance::DebugCallback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                       VkDebugUtilsMessageTypeFlagsEXT types,
                                                       const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                       void* user) {
  auto* self = static_cast<Instance*>(user);
  const char* text = data && data->pMessage ? data->pMessage : "(no message)";
  // Best practices reports performance-type messages: the layer's too.
  if (!(types & (VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT))) {
    // The loader's own reports (general type), e.g. an ICD manifest whose
    // library it cannot load (another architecture's, on a multiarch
    // system): shown, but no validation error of the run.
    if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) std::fprintf(stderr, "[vulkan loader] %s\n", text);
    return VK_FALSE;
  }
  std::lock_guard<std::mutex> lock(self->mutex_);
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    self->errors_++;
    if (self->messages_.size() < kKeptMessages) self->messages_.emplace_back(text);
    std::fprintf(stderr, "[vulkan validation error] %s\n", text);
  } else {
    self->warnings_++;
    std::string id = data && data->pMessageIdName ? data->pMessageIdName : "";
    if (id.empty()) id = fmt::format("0x{:08x}", static_cast<uint32_t>(data ? data->messageIdNumber : 0));
    const uint64_t seen = self->warning_ids_[id]++;
    if (self->print_warnings_ && seen == 0) std::fprintf(stderr, "[vulkan validation warning] %s\n", text);
  }
  return VK_FALSE;  // never abort the call
}

}  // namespace pebench
