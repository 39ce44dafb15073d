#include "runtime/shader_module.h"

namespace pebench {

StatusOr<std::unique_ptr<ShaderModule>> ShaderModule::Create(const Device& device, const uint32_t* words,
                                                             size_t word_count) {
  auto reflection = reflect_spirv(words, word_count);
  if (!reflection) return Status::error("ShaderModule: not SPIR-V (bad magic number or truncated)", VK_ERROR_INITIALIZATION_FAILED);
  std::unique_ptr<ShaderModule> self(new ShaderModule(device));
  self->reflection_ = std::move(*reflection);
  VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  info.codeSize = word_count * sizeof(uint32_t);
  info.pCode = words;
  PB_VK_RETURN_IF_ERROR(vkCreateShaderModule(device.handle(), &info, nullptr, &self->module_));
  return self;
}

ShaderModule::~ShaderModule() {
  if (device_.lost()) return;  // see Device::lost()
  if (module_) vkDestroyShaderModule(device_.handle(), module_, nullptr);
}

}  // namespace pebench
