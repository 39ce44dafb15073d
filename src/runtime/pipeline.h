// ComputePipeline: a compute VkPipeline whose interface is N buffers (set 0,
// bindings 0..N-1), a push-constant block and uint32 specialization
// constants (constant_id i = spec_constants[i]). A buffer is bound as a
// storage buffer unless the shader's SPIR-V declares a storage texel buffer
// at its binding (SpirvReflection::texel_buffers); then it is bound through
// a buffer view in the shader's format.
//
// Contract: the pipeline is built through the device's VkPipelineCache.
// Every spec constant the shader's SPIR-V declares must be given, under the
// name the host expects where it names one (a missing or misnamed one is a
// host/shader mismatch, an error), and the workgroup size the
// constants give must fit the device's limits (else FEATURE_NOT_PRESENT).
// Where the device enabled pipelineExecutableInfo, the driver's statistics
// are captured (VGPRs, spills, ... under the driver's own names).
// A non-zero `required_subgroup_size` is honoured only when the device enabled
// subgroupSizeControl and the size is within its range (else Create fails
// with a message saying so); `full_subgroups` likewise needs
// computeFullSubgroups.
#pragma once

#include <volk.h>

#include <array>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/device.h"
#include "runtime/shader_module.h"
#include "runtime/status.h"

namespace pebench {

struct PipelineDesc {
  std::string name;                      // for error messages
  uint32_t buffer_count = 0;             // storage buffers at bindings 0..buffer_count-1
  uint32_t push_constant_bytes = 0;      // multiple of 4, <= maxPushConstantsSize
  std::vector<uint32_t> spec_constants;  // constant_id i gets spec_constants[i]
  // Names the host expects at some of those ids (Dispatch::spec_names).
  std::vector<std::pair<uint32_t, std::string>> spec_names;
  uint32_t required_subgroup_size = 0;   // 0: the driver's choice
  bool full_subgroups = false;
};

class ComputePipeline {
 public:
  static StatusOr<std::unique_ptr<ComputePipeline>> Create(const Device& device, const ShaderModule& shader,
                                                           const PipelineDesc& desc);
  ~ComputePipeline();
  ComputePipeline(const ComputePipeline&) = delete;
  ComputePipeline& operator=(const ComputePipeline&) = delete;

  VkPipeline handle() const { return pipeline_; }
  VkPipelineLayout layout() const { return layout_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_; }
  const PipelineDesc& desc() const { return desc_; }
  const std::array<uint32_t, 3>& local_size() const { return local_size_; }
  // Every spec constant given, named from the shader (SpirvReflection::spec_name).
  const std::vector<std::pair<std::string, uint32_t>>& named_spec_constants() const { return named_spec_; }
  // The driver's statistics, in its order ("Executable/Name" when the
  // pipeline has several executables); empty without the extension.
  const std::vector<std::pair<std::string, double>>& stats() const { return stats_; }
  // Binding i's texel format; VK_FORMAT_UNDEFINED: a storage buffer.
  VkFormat binding_format(uint32_t i) const { return binding_formats_.at(i); }
  VkDescriptorType descriptor_type(uint32_t i) const {
    return binding_format(i) == VK_FORMAT_UNDEFINED ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                                                    : VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER;
  }

 private:
  ComputePipeline(const Device& device, PipelineDesc desc) : device_(device), desc_(std::move(desc)) {}
  const Device& device_;
  PipelineDesc desc_;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  std::array<uint32_t, 3> local_size_{1, 1, 1};
  std::vector<std::pair<std::string, uint32_t>> named_spec_;
  std::vector<std::pair<std::string, double>> stats_;
  std::vector<VkFormat> binding_formats_;
};

class Buffer;
struct BufferRange;

// DescriptorPool: descriptor sets for compute pipelines (storage buffers and
// storage texel buffers); every set, and every buffer view a set's texel
// buffers use, lives until the pool is destroyed.
class DescriptorPool {
 public:
  static StatusOr<std::unique_ptr<DescriptorPool>> Create(const Device& device, uint32_t max_sets,
                                                          uint32_t max_buffers);
  ~DescriptorPool();
  DescriptorPool(const DescriptorPool&) = delete;
  DescriptorPool& operator=(const DescriptorPool&) = delete;

  // A set for `pipeline` with ranges[i] at binding i.
  StatusOr<VkDescriptorSet> allocate_ranges(const ComputePipeline& pipeline, const std::vector<BufferRange>& ranges);
  // The same with every buffer bound whole.
  StatusOr<VkDescriptorSet> allocate(const ComputePipeline& pipeline, const std::vector<const Buffer*>& buffers);

 private:
  explicit DescriptorPool(const Device& device) : device_(device) {}
  // A view of `range` in binding `binding`'s format, owned by the pool;
  // errors where the device's texel-buffer limits do not allow it.
  StatusOr<VkBufferView> texel_view(const ComputePipeline& pipeline, uint32_t binding, const BufferRange& range);
  const Device& device_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  std::vector<VkBufferView> views_;
};

}  // namespace pebench
