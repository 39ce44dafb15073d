#include "runtime/instance.h"

#include <cstdio>
#include <cstring>

namespace pebench {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";
constexpr size_t kKeptMessages = 8;

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
  if (options.validation) {
    if (!has_layer(kValidationLayer)) {
      return Status::error(
          "validation requested but VK_LAYER_KHRONOS_validation is not installed "
          "(Debian: vulkan-validationlayers)",
          VK_ERROR_LAYER_NOT_PRESENT);
    }
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
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
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  // Chained so that instance creation and destruction are validated too.
  if (options.validation) info.pNext = &messenger_info;

  PB_VK_RETURN_IF_ERROR(vkCreateInstance(&info, nullptr, &self->instance_));
  // Device functions too, through the loader's trampolines: they dispatch to the right
  // driver for every device, so several devices (`--device all`) can coexist.
  volkLoadInstance(self->instance_);

  if (options.validation) {
    PB_VK_RETURN_IF_ERROR(vkCreateDebugUtilsMessengerEXT(self->instance_, &messenger_info, nullptr,
                                                         &self->messenger_));
  }
  return self;
}

Instance::~Instance() {
  if (messenger_ != VK_NULL_HANDLE) vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
  if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
}

std::vector<std::string> Instance::validation_messages() const { return messages_; }

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
  if (!(types & VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT)) {
    // The loader's own reports (general type), e.g. an ICD manifest whose
    // library it cannot load (another architecture's, on a multiarch
    // system): shown, but no validation error of the run.
    if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) std::fprintf(stderr, "[vulkan loader] %s\n", text);
    return VK_FALSE;
  }
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    self->errors_++;
    if (self->messages_.size() < kKeptMessages) self->messages_.emplace_back(text);
    std::fprintf(stderr, "[vulkan validation error] %s\n", text);
  } else {
    self->warnings_++;
    if (self->print_warnings_) std::fprintf(stderr, "[vulkan validation warning] %s\n", text);
  }
  return VK_FALSE;  // never abort the call
}

}  // namespace pebench
