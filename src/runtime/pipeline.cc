#include "runtime/pipeline.h"

#include <fmt/format.h>

#include "runtime/buffer.h"

namespace pebench {
namespace {

// Every constant the shader declares must come from the host: a missing id
// means the two sides disagree on the interface.
Status check_spec_constants(const SpirvReflection& shader, const PipelineDesc& desc) {
  for (const auto& [id, info] : shader.spec_constants) {
    if (id >= desc.spec_constants.size()) {
      return Status::error(fmt::format("{}: the shader declares spec constant {} ({}), the host sets {} (ids 0..{})",
                                       desc.name, id, shader.spec_name(id), desc.spec_constants.size(),
                                       static_cast<int>(desc.spec_constants.size()) - 1),
                           VK_ERROR_INITIALIZATION_FAILED);
    }
  }
  // An id the shader does not declare (unused, or removed by the optimizer)
  // is set to no effect, as Vulkan allows.
  for (const auto& [id, name] : desc.spec_names) {
    if (shader.declares_spec(id) && shader.spec_name(id) != name) {
      return Status::error(fmt::format("{}: the host sets spec constant {} as {}, the shader declares it as {}",
                                       desc.name, id, name, shader.spec_name(id)),
                           VK_ERROR_INITIALIZATION_FAILED);
    }
  }
  return Status();
}

Status check_local_size(const std::array<uint32_t, 3>& size, const DeviceLimits& limits, const std::string& name) {
  const uint64_t total = uint64_t{size[0]} * size[1] * size[2];
  if (total == 0) return Status::error(fmt::format("{}: workgroup size 0", name), VK_ERROR_INITIALIZATION_FAILED);
  if (total > limits.max_compute_work_group_invocations) {
    return Status::error(fmt::format("{}: {} invocations per workgroup, more than maxComputeWorkGroupInvocations ({})",
                                     name, total, limits.max_compute_work_group_invocations),
                         VK_ERROR_FEATURE_NOT_PRESENT);
  }
  for (int k = 0; k < 3; ++k) {
    if (size[k] > limits.max_compute_work_group_size[k]) {
      return Status::error(fmt::format("{}: workgroup size {} in dimension {}, more than maxComputeWorkGroupSize ({})",
                                       name, size[k], k, limits.max_compute_work_group_size[k]),
                           VK_ERROR_FEATURE_NOT_PRESENT);
    }
  }
  return Status();
}

double statistic_value(const VkPipelineExecutableStatisticKHR& s) {
  switch (s.format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
      return s.value.b32 ? 1 : 0;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
      return static_cast<double>(s.value.i64);
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
      return static_cast<double>(s.value.u64);
    default:
      return s.value.f64;
  }
}

// VK_KHR_pipeline_executable_properties: every executable's statistics.
StatusOr<std::vector<std::pair<std::string, double>>> executable_stats(VkDevice device, VkPipeline pipeline) {
  VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  info.pipeline = pipeline;
  uint32_t count = 0;
  PB_VK_RETURN_IF_ERROR(vkGetPipelineExecutablePropertiesKHR(device, &info, &count, nullptr));
  std::vector<VkPipelineExecutablePropertiesKHR> execs(count, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
  PB_VK_RETURN_IF_ERROR(vkGetPipelineExecutablePropertiesKHR(device, &info, &count, execs.data()));
  std::vector<std::pair<std::string, double>> out;
  for (uint32_t e = 0; e < count; ++e) {
    VkPipelineExecutableInfoKHR exec{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    exec.pipeline = pipeline;
    exec.executableIndex = e;
    uint32_t n = 0;
    PB_VK_RETURN_IF_ERROR(vkGetPipelineExecutableStatisticsKHR(device, &exec, &n, nullptr));
    std::vector<VkPipelineExecutableStatisticKHR> stats(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    PB_VK_RETURN_IF_ERROR(vkGetPipelineExecutableStatisticsKHR(device, &exec, &n, stats.data()));
    const std::string prefix = count > 1 ? std::string(execs[e].name) + "/" : "";
    for (const auto& s : stats) out.emplace_back(prefix + s.name, statistic_value(s));
  }
  return out;
}

// The storage texel buffer formats pebench binds (TexelFormat), as SPIR-V
// and Vulkan name them.
struct TexelFormatInfo {
  uint32_t spirv;  // SPIR-V ImageFormat
  VkFormat format;
  TexelFormat texel;
  const char* name;
};
constexpr TexelFormatInfo kTexelFormats[] = {
    {kSpirvImageFormatRgba32f, VK_FORMAT_R32G32B32A32_SFLOAT, TexelFormat::kRgba32f, "rgba32f"},
    {kSpirvImageFormatRgba16f, VK_FORMAT_R16G16B16A16_SFLOAT, TexelFormat::kRgba16f, "rgba16f"},
    {kSpirvImageFormatR32f, VK_FORMAT_R32_SFLOAT, TexelFormat::kR32f, "r32f"},
};
const TexelFormatInfo* texel_format(uint32_t spirv) {
  for (const auto& f : kTexelFormats) {
    if (f.spirv == spirv) return &f;
  }
  return nullptr;
}
const TexelFormatInfo* texel_format(VkFormat format) {
  for (const auto& f : kTexelFormats) {
    if (f.format == format) return &f;
  }
  return nullptr;
}

// The format of each binding: a storage texel buffer's (from the shader's
// SPIR-V), VK_FORMAT_UNDEFINED for a storage buffer. Errors where the device
// cannot bind them (FEATURE_NOT_PRESENT) or the shader's texel buffer lies
// past the bindings the host gives.
StatusOr<std::vector<VkFormat>> binding_formats(const Device& device, const SpirvReflection& shader,
                                                const PipelineDesc& desc) {
  const DeviceLimits& limits = device.info().limits;
  std::vector<VkFormat> formats(desc.buffer_count, VK_FORMAT_UNDEFINED);
  for (const auto& [binding, spirv_format] : shader.texel_buffers) {
    if (binding >= desc.buffer_count) {
      return Status::error(fmt::format("{}: the shader's texel buffer at binding {} is past the {} buffers bound",
                                       desc.name, binding, desc.buffer_count));
    }
    const TexelFormatInfo* f = texel_format(spirv_format);
    if (!f) {
      return Status::error(fmt::format("{}: texel buffer at binding {} has SPIR-V image format {} (pebench binds "
                                       "rgba32f, rgba16f and r32f)",
                                       desc.name, binding, spirv_format));
    }
    if (!device.enabled().storage_texel(f->texel)) {
      return Status::error(fmt::format("{}: storage texel buffers of {} not supported", desc.name, f->name),
                           VK_ERROR_FEATURE_NOT_PRESENT);
    }
    formats[binding] = f->format;
  }
  const uint32_t texels = static_cast<uint32_t>(shader.texel_buffers.size());
  if (texels > limits.max_per_stage_descriptor_storage_images) {
    return Status::error(fmt::format("{}: {} storage texel buffers (device allows {})", desc.name, texels,
                                     limits.max_per_stage_descriptor_storage_images),
                         VK_ERROR_FEATURE_NOT_PRESENT);
  }
  if (desc.buffer_count - texels > limits.max_per_stage_descriptor_storage_buffers) {
    return Status::error(fmt::format("{}: {} storage buffers (device allows {})", desc.name,
                                     desc.buffer_count - texels, limits.max_per_stage_descriptor_storage_buffers),
                         VK_ERROR_FEATURE_NOT_PRESENT);
  }
  return formats;
}

}  // namespace

StatusOr<std::unique_ptr<ComputePipeline>> ComputePipeline::Create(const Device& device, const ShaderModule& shader,
                                                                   const PipelineDesc& desc) {
  const PhysicalDeviceInfo& dev = device.info();
  if (desc.push_constant_bytes % 4 != 0 || desc.push_constant_bytes > dev.limits.max_push_constants_size) {
    return Status::error(fmt::format("{}: {} bytes of push constants (device allows {})", desc.name,
                                     desc.push_constant_bytes, dev.limits.max_push_constants_size),
                         VK_ERROR_FEATURE_NOT_PRESENT);
  }
  auto formats = binding_formats(device, shader.reflection(), desc);
  if (!formats.ok()) return formats.status();
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

  if (Status s = check_spec_constants(shader.reflection(), desc); !s.ok()) return s;
  const auto local_size = shader.reflection().local_size_with(desc.spec_constants);
  if (Status s = check_local_size(local_size, dev.limits, desc.name); !s.ok()) return s;

  std::unique_ptr<ComputePipeline> self(new ComputePipeline(device, desc));
  self->local_size_ = local_size;
  self->binding_formats_ = std::move(formats).value();
  for (uint32_t id = 0; id < desc.spec_constants.size(); ++id) {
    // Ids the module does not declare are padding before a later id.
    if (!shader.reflection().declares_spec(id)) continue;
    self->named_spec_.emplace_back(shader.reflection().spec_name(id), desc.spec_constants[id]);
  }
  std::vector<VkDescriptorSetLayoutBinding> bindings(desc.buffer_count);
  for (uint32_t i = 0; i < desc.buffer_count; ++i) {
    bindings[i] = {i, self->descriptor_type(i), 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
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
  const bool capture = device.enabled().pipeline_executable_info;
  if (capture) info.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  PB_VK_RETURN_IF_ERROR(
      vkCreateComputePipelines(device.handle(), device.pipeline_cache(), 1, &info, nullptr, &self->pipeline_));
  if (capture) {
    auto stats = executable_stats(device.handle(), self->pipeline_);
    if (!stats.ok()) return stats.status();
    self->stats_ = std::move(stats).value();
  }
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
  // Any of the buffers may be a texel buffer (ComputePipeline::binding_format).
  const uint32_t n = max_buffers < 1 ? 1 : max_buffers;
  const VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, n},
                                        {VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER, n}};
  VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  info.maxSets = max_sets < 1 ? 1 : max_sets;
  info.poolSizeCount = 2;
  info.pPoolSizes = sizes;
  PB_VK_RETURN_IF_ERROR(vkCreateDescriptorPool(device.handle(), &info, nullptr, &self->pool_));
  return self;
}

DescriptorPool::~DescriptorPool() {
  if (device_.lost()) return;  // see Device::lost()
  for (VkBufferView view : views_) vkDestroyBufferView(device_.handle(), view, nullptr);
  if (pool_) vkDestroyDescriptorPool(device_.handle(), pool_, nullptr);
}

StatusOr<VkBufferView> DescriptorPool::texel_view(const ComputePipeline& pipeline, uint32_t binding,
                                                  const BufferRange& range) {
  const DeviceLimits& limits = device_.info().limits;
  const VkFormat format = pipeline.binding_format(binding);
  const VkDeviceSize bytes_per_texel = texel_bytes(texel_format(format)->texel);
  const VkDeviceSize bytes = range.size == VK_WHOLE_SIZE ? range.buffer->size() - range.offset : range.size;
  const VkDeviceSize texels = bytes / bytes_per_texel;
  if (limits.min_texel_buffer_offset_alignment == 0 || range.offset % limits.min_texel_buffer_offset_alignment != 0 ||
      texels > limits.max_texel_buffer_elements) {
    return Status::error(fmt::format("{}: binding {}: a texel buffer of {} texels at offset {} (device allows {} "
                                     "texels at multiples of {})",
                                     pipeline.desc().name, binding, texels, range.offset,
                                     limits.max_texel_buffer_elements, limits.min_texel_buffer_offset_alignment),
                         VK_ERROR_FEATURE_NOT_PRESENT);
  }
  VkBufferViewCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
  info.buffer = range.buffer->handle();
  info.format = format;
  info.offset = range.offset;
  info.range = texels * bytes_per_texel;  // whole texels
  VkBufferView view = VK_NULL_HANDLE;
  PB_VK_RETURN_IF_ERROR(vkCreateBufferView(device_.handle(), &info, nullptr, &view));
  views_.push_back(view);
  return view;
}

StatusOr<VkDescriptorSet> DescriptorPool::allocate(const ComputePipeline& pipeline,
                                                   const std::vector<const Buffer*>& buffers) {
  std::vector<BufferRange> ranges;
  for (const Buffer* b : buffers) ranges.push_back({b});
  return allocate_ranges(pipeline, ranges);
}

StatusOr<VkDescriptorSet> DescriptorPool::allocate_ranges(const ComputePipeline& pipeline,
                                                          const std::vector<BufferRange>& buffers) {
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
  std::vector<VkBufferView> set_views(buffers.size(), VK_NULL_HANDLE);
  for (size_t i = 0; i < buffers.size(); ++i) {
    const uint32_t binding = static_cast<uint32_t>(i);
    infos[i] = {buffers[i].buffer->handle(), buffers[i].offset, buffers[i].size};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = binding;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = pipeline.descriptor_type(binding);
    if (pipeline.binding_format(binding) == VK_FORMAT_UNDEFINED) {
      writes[i].pBufferInfo = &infos[i];
    } else {
      auto view = texel_view(pipeline, binding, buffers[i]);
      if (!view.ok()) return view.status();
      set_views[i] = view.value();
      writes[i].pTexelBufferView = &set_views[i];
    }
  }
  vkUpdateDescriptorSets(device_.handle(), static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  return set;
}

}  // namespace pebench
