// ShaderModule: a VkShaderModule made from embedded SPIR-V words, with what
// those words say about the interface (spec constants, workgroup size).
#pragma once

#include <volk.h>

#include <memory>

#include "runtime/device.h"
#include "runtime/spirv_reflect.h"
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
  const SpirvReflection& reflection() const { return reflection_; }

 private:
  explicit ShaderModule(const Device& device) : device_(device) {}
  const Device& device_;
  VkShaderModule module_ = VK_NULL_HANDLE;
  SpirvReflection reflection_;
};

}  // namespace pebench
