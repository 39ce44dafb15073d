// ComputePipeline: a compute VkPipeline whose interface is N storage buffers
// (set 0, bindings 0..N-1), a push-constant block and uint32
// specialization constants (constant_id i = spec_constants[i]).
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
};

class Buffer;
struct BufferRange;

// DescriptorPool: storage-buffer descriptor sets for compute pipelines; every
// set lives until the pool is destroyed.
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
  const Device& device_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
};

}  // namespace pebench
