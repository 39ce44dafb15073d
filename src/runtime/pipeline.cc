#include "runtime/pipeline.h"

#include <fmt/format.h>

#include "runtime/buffer.h"

namespace pebench {

StatusOr<std::unique_ptr<ComputePipeline>> ComputePipeline::Create(const Device& device, const ShaderModule& shader,
                                                                   const PipelineDesc& desc) {
  const PhysicalDeviceInfo& dev = device.info();
  if (desc.push_constant_bytes % 4 != 0 || desc.push_constant_bytes > dev.limits.max_push_constants_size) {
    return Status::error(fmt::format("{}: {} bytes of push constants (device allows {})", desc.name,
                                     desc.push_constant_bytes, dev.limits.max_push_constants_size),
                         VK_ERROR_FEATURE_NOT_PRESENT);
  }
  if (desc.buffer_count > dev.limits.max_per_stage_descriptor_storage_buffers) {
    return Status::error(fmt::format("{}: {} storage buffers (device allows {})", desc.name, desc.buffer_count,
                                     dev.limits.max_per_stage_descriptor_storage_buffers),
                         VK_ERROR_FEATURE_NOT_PRESENT);
  }
  if (desc.required_subgroup_size != 0 &&
      (!device.enabled().subgroup_size_control || desc.required_subgroup_size < dev.subgroup.min_size ||
       desc.required_subgroup_size > dev.subgroup.max_size)) {
    return Status::error(fmt::format("{}: subgroup size {} cannot be required on this device", desc.name,
                                     desc.required_subgroup_size),
                         VK_ERROR_FEATURE_NOT_PRESENT);
  }
  if (desc.full_subgroups && !device.enabled().compute_full_subgroups) {
    return Status::error(fmt::format("{}: full subgroups not supported", desc.name), VK_ERROR_FEATURE_NOT_PRESENT);
  }

  std::unique_ptr<ComputePipeline> self(new ComputePipeline(device, desc));
  std::vector<VkDescriptorSetLayoutBinding> bindings(desc.buffer_count);
  for (uint32_t i = 0; i < desc.buffer_count; ++i) {
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  }
  VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_info.bindingCount = desc.buffer_count;
  set_info.pBindings = bindings.data();
  PB_VK_RETURN_IF_ERROR(vkCreateDescriptorSetLayout(device.handle(), &set_info, nullptr, &self->set_layout_));

  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, desc.push_constant_bytes};
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &self->set_layout_;
  layout_info.pushConstantRangeCount = desc.push_constant_bytes ? 1 : 0;
  layout_info.pPushConstantRanges = &range;
  PB_VK_RETURN_IF_ERROR(vkCreatePipelineLayout(device.handle(), &layout_info, nullptr, &self->layout_));

  std::vector<VkSpecializationMapEntry> entries(desc.spec_constants.size());
  for (uint32_t i = 0; i < entries.size(); ++i) {
    entries[i] = {i, static_cast<uint32_t>(i * sizeof(uint32_t)), sizeof(uint32_t)};
  }
  VkSpecializationInfo spec{};
  spec.mapEntryCount = static_cast<uint32_t>(entries.size());
  spec.pMapEntries = entries.data();
  spec.dataSize = desc.spec_constants.size() * sizeof(uint32_t);
  spec.pData = desc.spec_constants.data();

  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  subgroup.requiredSubgroupSize = desc.required_subgroup_size;

  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = shader.handle();
  info.stage.pName = "main";
  info.stage.pSpecializationInfo = entries.empty() ? nullptr : &spec;
  if (desc.required_subgroup_size) info.stage.pNext = &subgroup;
  if (desc.full_subgroups) info.stage.flags |= VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  info.layout = self->layout_;
  PB_VK_RETURN_IF_ERROR(
      vkCreateComputePipelines(device.handle(), device.pipeline_cache(), 1, &info, nullptr, &self->pipeline_));
  return self;
}

ComputePipeline::~ComputePipeline() {
  if (device_.lost()) return;  // see Device::lost()
  if (pipeline_) vkDestroyPipeline(device_.handle(), pipeline_, nullptr);
  if (layout_) vkDestroyPipelineLayout(device_.handle(), layout_, nullptr);
  if (set_layout_) vkDestroyDescriptorSetLayout(device_.handle(), set_layout_, nullptr);
}

StatusOr<std::unique_ptr<DescriptorPool>> DescriptorPool::Create(const Device& device, uint32_t max_sets,
                                                                 uint32_t max_buffers) {
  std::unique_ptr<DescriptorPool> self(new DescriptorPool(device));
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, max_buffers < 1 ? 1 : max_buffers};
  VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  info.maxSets = max_sets < 1 ? 1 : max_sets;
  info.poolSizeCount = 1;
  info.pPoolSizes = &size;
  PB_VK_RETURN_IF_ERROR(vkCreateDescriptorPool(device.handle(), &info, nullptr, &self->pool_));
  return self;
}

DescriptorPool::~DescriptorPool() {
  if (device_.lost()) return;  // see Device::lost()
  if (pool_) vkDestroyDescriptorPool(device_.handle(), pool_, nullptr);
}

StatusOr<VkDescriptorSet> DescriptorPool::allocate(const ComputePipeline& pipeline,
                                                   const std::vector<const Buffer*>& buffers) {
  if (buffers.size() != pipeline.desc().buffer_count) {
    return Status::error(fmt::format("{}: {} buffers bound, the pipeline declares {}", pipeline.desc().name,
                                     buffers.size(), pipeline.desc().buffer_count));
  }
  VkDescriptorSetLayout layout = pipeline.set_layout();
  VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  alloc.descriptorPool = pool_;
  alloc.descriptorSetCount = 1;
  alloc.pSetLayouts = &layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  PB_VK_RETURN_IF_ERROR(vkAllocateDescriptorSets(device_.handle(), &alloc, &set));

  std::vector<VkDescriptorBufferInfo> infos(buffers.size());
  std::vector<VkWriteDescriptorSet> writes(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    infos[i] = {buffers[i]->handle(), 0, VK_WHOLE_SIZE};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = static_cast<uint32_t>(i);
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(device_.handle(), static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  return set;
}

}  // namespace pebench
