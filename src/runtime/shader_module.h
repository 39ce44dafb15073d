// ShaderModule: a VkShaderModule made from embedded SPIR-V words.
#pragma once

#include <volk.h>

#include <memory>

#include "runtime/device.h"
#include "runtime/status.h"

namespace pebench {

class ShaderModule {
 public:
  static StatusOr<std::unique_ptr<ShaderModule>> Create(const Device& device, const uint32_t* words,
                                                        size_t word_count);
  ~ShaderModule();
  ShaderModule(const ShaderModule&) = delete;
  ShaderModule& operator=(const ShaderModule&) = delete;
  VkShaderModule handle() const { return module_; }

 private:
  explicit ShaderModule(const Device& device) : device_(device) {}
  const Device& device_;
  VkShaderModule module_ = VK_NULL_HANDLE;
};

}  // namespace pebench
